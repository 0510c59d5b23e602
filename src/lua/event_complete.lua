-- event_complete: record the outcome of one delivery attempt.
-- KEYS[1] = <prefix>{q<n>}:due   KEYS[2] = <prefix>{q<n>}:lease   KEYS[3] = <prefix>{q<n>}:dead
-- ARGV = shard key prefix, id, claim token, outcome (delivered|retry|dead|release),
--        next_ms, now_ms, http status ('' = none), error text, attempt log entry (JSON),
--        log cap, retention (seconds)
-- A delivered or dead event (and its log) expires after the retention; the
-- dead set and the listing indexes forget what is older.
-- Only the holder of the lease may complete it (a late answer after the lease
-- ran out is ignored). Returns 1, or 0 when the lease was not held.
if #KEYS ~= 3 or #ARGV ~= 11 then
  return redis.error_reply('ERR event_complete: wants 3 keys and 11 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, id = ARGV[1], ARGV[2]
local ek = p .. 'e:' .. id
local e = redis.call('HMGET', ek, 'state', 'token', 'order')
if e[1] ~= 'delivering' or e[2] ~= ARGV[3] then return 0 end
local now, outcome = ARGV[6], ARGV[4]
redis.call('ZREM', KEYS[2], id)
redis.call('HSET', ek, 'token', '', 'updated_ms', now)
-- a release (destination busy) made no attempt: the last result stays
if outcome ~= 'release' then
  redis.call('HSET', ek, 'last_status', ARGV[7], 'last_error', ARGV[8])
  local lk = p .. 'log:' .. id
  redis.call('RPUSH', lk, ARGV[9])
  redis.call('LTRIM', lk, -tonumber(ARGV[10]), -1)
end
if outcome == 'retry' or outcome == 'release' then
  if outcome == 'release' then redis.call('HINCRBY', ek, 'attempts', -1) end
  redis.call('HSET', ek, 'state', 'pending', 'next_ms', ARGV[5])
  redis.call('ZADD', KEYS[1], ARGV[5], id)
  return 1
end
local ttl = tonumber(ARGV[11])
if outcome == 'delivered' then
  redis.call('HSET', ek, 'state', 'delivered', 'delivered_ms', now)
else
  redis.call('HSET', ek, 'state', 'dead', 'dead_ms', now)
  redis.call('ZADD', KEYS[3], now, id)
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', tonumber(now) - ttl * 1000)
end
redis.call('EXPIRE', ek, ttl)
redis.call('EXPIRE', p .. 'log:' .. id, ttl)
-- the next event of the same charge may go now
local ok = p .. 'o:' .. e[3]
redis.call('LREM', ok, 1, id)
local nxt = redis.call('LINDEX', ok, 0)
if nxt then
  local due = tonumber(redis.call('HGET', p .. 'e:' .. nxt, 'next_ms') or now)
  if due < tonumber(now) then due = now end
  redis.call('ZADD', KEYS[1], due, nxt)
end
return 1
