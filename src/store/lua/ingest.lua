-- ingest: upstream providers' notifications for accounts of one shard, each once per
-- upstream notification id, in one durable write however many there are: either the charge
-- a notification names moves through the state machine (with its event), or, for a charge
-- pixrelay does not know, the notification is relayed as received. A notification that
-- contradicts its charge (its data.status is not the event's, its data.amount not the
-- charge's) moves nothing. A process gathers the notifications that arrive during one turn
-- of its loop into one call per shard.
-- KEYS[1] = <prefix>{s<k>}:ingest   (names the shard; not written)
-- ARGV = shard key prefix, now (ms), now as text, retention (seconds), then 7 per
--        notification: env '\n' account, the key of its upstream id (p up:<account>:
--        <upstream id>, ks_upstream_key), event id, event type, body to relay, order key
--        of a relayed event, and '' or, for a charge of this account, charge id '\n' action (pay | expire |
--        refund) '\n' data.amount ('' = not given) '\n' data.status when it contradicts
--        the event ('' = not given, or the event's). (Each value crossing into the script
--        or out of it costs about as much as a field's write: docs/performance.md.)
-- Returns a flat list, per notification in order: {'relayed'} (the event id sent) |
-- {'duplicate', event id} | {'status_mismatch', the charge's status} | what charge_move
-- returns ({'ok', status, charge json, event id}, {'amount_mismatch', amount}, ...), each
-- as long as its first element says (charges_reply_len).
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV < 4 or (#ARGV - 4) % 7 ~= 0 then
  return redis.error_reply('ERR ingest: wants 1 keys and 4 + 7n arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now, now_txt, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local out = {}
local urls = {} -- env '\n' account -> postback_url
due_batch()
for a = 5, #ARGV, 7 do
  local ea, evt, charge = ARGV[a], ARGV[a + 2], ARGV[a + 6]
  local dk = ARGV[a + 1]
  local r
  -- remembered at once (one command for the check and the write); forgotten again when
  -- the notification changes nothing (so a corrected one with the same id is taken)
  local seen = redis.call('SET', dk, evt, 'NX', 'GET', 'EX', ttl)
  if seen then
    r = {'duplicate', seen}
  elseif charge ~= '' then
    local _, account = ea_split(ea)
    local cid, action, amount, status = string.match(charge, '^([^\n]*)\n([^\n]*)\n([^\n]*)\n(.*)$')
    if status ~= '' then
      -- its data.status is not the event's: refused for a charge of this account
      local c = redis.call('HMGET', p .. 'ch:' .. cid, 'status', 'account')
      if c[1] and c[2] == account then r = {'status_mismatch', c[1]} end
    end
    if not r then
      r = charge_move(p, cid, action, account, now, now_txt, evt, amount, ttl)
    end
    if r[1] ~= 'not_found' and not ((r[1] == 'ok' or r[1] == 'expired') and r[#r] ~= '') then
      redis.call('DEL', dk)
    end
  end
  if not r or r[1] == 'not_found' then
    local url = urls[ea]
    if not url then
      local env, account = ea_split(ea)
      url = redis.call('HGET', p .. 'acct:' .. env .. ':' .. account, 'postback_url') or ''
      urls[ea] = url
    end
    event_write_to(p, evt, account_dest(p, ea, nil, nil, url), ARGV[a + 3], ARGV[a + 4],
      ARGV[a + 5], now, ttl)
    out[#out + 1] = 'relayed'
  else
    for j = 1, #r do out[#out + 1] = r[j] end
  end
end
due_flush(p)
return out
