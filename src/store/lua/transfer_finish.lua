-- transfer_finish: mark a debited internal transfer done, once its credit happened.
-- KEYS[1] = <prefix>{s<k>}:xout   zset transfer id -> when it was debited
-- ARGV = source shard prefix, transfer id, retention (seconds)
-- Returns 1, or 0 when it was done already.
if #KEYS ~= 1 or #ARGV ~= 3 then
  return redis.error_reply('ERR transfer_finish: wants 1 keys and 3 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local xk = ARGV[1] .. 'xfer:' .. ARGV[2]
if redis.call('ZREM', KEYS[1], ARGV[2]) == 0 then return 0 end
redis.call('HSET', xk, 'state', 'done')
redis.call('EXPIRE', xk, ARGV[3])
return 1
