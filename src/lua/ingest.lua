-- ingest: an upstream provider's notification for an account, in one durable write: once
-- per upstream notification id, either the charge it names moves through the state machine
-- (with its event), or, for a charge pixrelay does not know, it is relayed as received.
-- KEYS[1] = <prefix>{s<k>}:up:<account>:<upstream id>   -> event id, for the retention
-- ARGV = shard key prefix, account, env, charge id ('' = not one of this account's), action
--        (pay | expire | refund), event type, event id, now (ms), now as text,
--        retention (seconds), body to relay, order key of a relayed event
-- Returns {'duplicate', event id} | {'relayed', event id} | what charge_move returns.
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV ~= 12 then
  return redis.error_reply('ERR ingest: wants 1 keys and 12 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, account, ttl = ARGV[1], ARGV[2], ARGV[10]
-- remembered at once (one command for the check and the write); forgotten
-- again when the notification changes nothing
local seen = redis.call('SET', KEYS[1], ARGV[7], 'NX', 'GET', 'EX', ttl)
if seen then return {'duplicate', seen} end
if ARGV[4] ~= '' then
  local r = charge_move(p, ARGV[4], ARGV[5], account, ARGV[8], ARGV[9], ARGV[7], '', ttl)
  if r[1] ~= 'not_found' then
    if not ((r[1] == 'ok' or r[1] == 'expired') and r[#r] ~= '') then
      redis.call('DEL', KEYS[1])
    end
    return r
  end
end
local url = redis.call('HGET', p .. 'acct:' .. ARGV[3] .. ':' .. account, 'postback_url') or ''
event_write(p, ARGV[7], ARGV[3], account, ARGV[6], url, ARGV[11], ARGV[12], ARGV[8], ttl)
return {'relayed', ARGV[7]}
