-- expire_due: expire the pending charges of one shard whose time has come, each with its
-- event, in one call.
-- KEYS[1] = <prefix>{s<k>}:expiry   zset charge id -> expires_ms
-- ARGV = shard key prefix, now (ms), now as text, retention (seconds), then one new event
--        id per charge that may be expired (their number bounds the batch)
-- Returns the number of charges expired.
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV < 5 then
  return redis.error_reply('ERR expire_due: wants 1 keys and 5 or more arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now, now_txt, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, #ARGV - 4)
local n = 0
for i, cid in ipairs(due) do
  local r = charge_move(p, cid, 'expire', '', now, now_txt, ARGV[4 + i], '', ttl)
  if r[1] == 'ok' then
    n = n + 1
  else
    -- no longer pending (or gone): nothing to expire
    redis.call('ZREM', KEYS[1], cid)
  end
end
return n
