-- ingest: upstream providers' notifications for accounts of one shard, each once per
-- upstream notification id, in one durable write however many there are: either the charge
-- a notification names moves through the state machine (with its event), or, for a charge
-- pixrelay does not know, the notification is relayed as received. A notification that
-- contradicts its charge (its data.status is not the event's, its data.amount not the
-- charge's) moves nothing. A process gathers the notifications that arrive during one turn
-- of its loop into one call per shard.
-- KEYS[1] = <prefix>{s<k>}:ingest   (names the shard; not written)
-- ARGV = shard key prefix, now (ms), now as text, retention (seconds), number n of
--        notifications, then n times 11: account, env, upstream id, charge id ('' = not one
--        of this account's), action (pay | expire | refund), event type, event id, body to
--        relay, order key of a relayed event, data.amount ('' = not given), data.status
--        when it contradicts the event ('' = not given, or the event's)
-- Returns a flat list of 5 elements per notification, in order: how many of the next 4
-- are its answer, then {'duplicate', event id} | {'relayed', event id} |
-- {'status_mismatch', the charge's status} | what charge_move returns ({'ok', status,
-- charge json, event id}, {'amount_mismatch', amount}, ...), padded with ''.
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV < 5 or #ARGV ~= 5 + 11 * tonumber(ARGV[5]) then
  return redis.error_reply('ERR ingest: wants 1 keys and 5 + 11n arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now, now_txt, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local out = {}
local accounts = {}
due_batch()
for i = 0, tonumber(ARGV[5]) - 1 do
  local a = 6 + 11 * i
  local account, env, cid, evt = ARGV[a], ARGV[a + 1], ARGV[a + 3], ARGV[a + 6]
  local dk = p .. 'up:' .. account .. ':' .. ARGV[a + 2]
  local r
  -- remembered at once (one command for the check and the write); forgotten again when
  -- the notification changes nothing (so a corrected one with the same id is taken)
  local seen = redis.call('SET', dk, evt, 'NX', 'GET', 'EX', ttl)
  if seen then
    r = {'duplicate', seen}
  elseif cid ~= '' then
    if ARGV[a + 10] ~= '' then
      -- its data.status is not the event's: refused for a charge of this account
      local c = redis.call('HMGET', p .. 'ch:' .. cid, 'status', 'account')
      if c[1] and c[2] == account then r = {'status_mismatch', c[1]} end
    end
    if not r then
      r = charge_move(p, cid, ARGV[a + 4], account, now, now_txt, evt, ARGV[a + 9], ttl)
    end
    if r[1] ~= 'not_found' and not ((r[1] == 'ok' or r[1] == 'expired') and r[#r] ~= '') then
      redis.call('DEL', dk)
    end
  end
  if not r or r[1] == 'not_found' then
    -- (looked up by env, then account: no key built per notification)
    local by_env = accounts[env]
    if not by_env then
      by_env = {}
      accounts[env] = by_env
    end
    local url = by_env[account]
    if not url then
      url = redis.call('HGET', p .. 'acct:' .. env .. ':' .. account, 'postback_url') or ''
      by_env[account] = url
    end
    event_write(p, evt, env, account, ARGV[a + 5], url, ARGV[a + 7], ARGV[a + 8], now, ttl)
    r = {'relayed', evt}
  end
  out[#out + 1] = #r
  for j = 1, 4 do out[#out + 1] = r[j] or '' end
end
due_flush(p)
return out
