-- ingest: upstream providers' notifications for accounts of one shard, each once per
-- upstream notification id, in one durable write however many there are: either the charge
-- a notification names moves through the state machine (with its event), or, for a charge
-- pixrelay does not know, the notification is relayed as received. A notification that
-- contradicts its charge (its data.status is not the event's, its data.amount not the
-- charge's) moves nothing. A process gathers the notifications that arrive during one turn
-- of its loop into one call per shard.
-- KEYS[1] = <prefix>{s<k>}:ingest   (names the shard; not written)
-- ARGV = shard key prefix, now (ms), now as text, retention (seconds), then runs of
--        notifications, each of consecutive notifications of one account and form: its
--        head, env '\n' account and how many it holds (n: 5 values each; nc: 6 each), then
--        per notification: the key of its upstream id (p up:<account>:<upstream id>,
--        ks_upstream_key), event id, order key of a relayed event, event id '\n' env '\n'
--        account '\n' event type (the middle of a stream entry's meta, lib/event.lua),
--        body to relay, and in a run nc: charge id '\n' action (pay | expire | refund)
--        '\n' data.amount ('' = not given) '\n' data.status when it contradicts the event
--        ('' = not given, or the event's), a charge of this account. (Each value crossing
--        into the script or out of it costs about as much as a field's write:
--        docs/performance.md; a run's values are the account's once.)
-- Returns a flat list, per notification in order: {'relayed'} (the event id sent) |
-- {'duplicate', event id} | {'status_mismatch', the charge's status} | what charge_move
-- returns ({'ok', status, charge json, event id}, {'amount_mismatch', amount}, ...), each
-- as long as its first element says (charges_reply_len).
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV < 4 then
  return redis.error_reply('ERR ingest: wants 1 keys and 4 arguments and runs, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now, now_txt, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local out = {}
-- where the relayed events of account `account` in `env` (ea = both) go: its URL (and
-- endpoints) read once (lib/event.lua)
local function dest_of(ea, env, account)
  return account_dest(p, ea, env, account, account_info(p, env, account).url)
end
due_batch()
local a = 5
while a <= #ARGV do
  local ea, spec = ARGV[a], ARGV[a + 1]
  local n, charged = string.match(spec or '', '^(%d+)(c?)$')
  local w = charged == 'c' and 6 or 5
  n = tonumber(n)
  if not n or a + 1 + n * w > #ARGV then
    return redis.error_reply('ERR ingest: a run ' .. tostring(spec) .. ' at argument ' .. a ..
      ' wants more arguments than the ' .. #ARGV .. ' sent')
  end
  local env, account = ea_split(ea)
  local d = nil -- where the run's relayed events go, looked up once
  a = a + 2
  for _ = 1, n do
    local dk, evt, charge = ARGV[a], ARGV[a + 1], w == 6 and ARGV[a + 5] or ''
    local r
    -- remembered at once (one command for the check and the write); forgotten again when
    -- the notification changes nothing (so a corrected one with the same id is taken)
    local seen = redis.call('SET', dk, evt, 'NX', 'GET', 'EX', ttl)
    if seen then
      r = {'duplicate', seen}
    elseif charge ~= '' then
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
      if not d then d = dest_of(ea, env, account) end
      event_write_mid(p, evt, d, ARGV[a + 3], ARGV[a + 4], ARGV[a + 2], now, ttl)
      out[#out + 1] = 'relayed'
    else
      for j = 1, #r do out[#out + 1] = r[j] end
    end
    a = a + w
  end
end
due_flush(p)
return out
