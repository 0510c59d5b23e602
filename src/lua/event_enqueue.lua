-- event_enqueue: put an event into its delivery shard, once.
-- KEYS[1] = <prefix>{q<n>}:due   zset event id -> when it may be attempted
-- ARGV = shard key prefix (<prefix>{q<n>}:), id, env, account, type, url, body,
--        order key, created_ms, now_ms, retention (seconds)
-- Events of one order key (a charge) are delivered one after another: only
-- the head of <prefix>{q<n>}:o:<order> is in the due set.
-- Returns 1 when enqueued now, 0 when it already was.
if #KEYS ~= 1 or #ARGV ~= 11 then
  return redis.error_reply('ERR event_enqueue: wants 1 keys and 11 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p = ARGV[1]
local ek = p .. 'e:' .. ARGV[2]
if redis.call('EXISTS', ek) == 1 then return 0 end
local state = 'pending'
if ARGV[6] == '' then state = 'delivered' end
redis.call('HSET', ek, 'id', ARGV[2], 'env', ARGV[3], 'account', ARGV[4], 'type', ARGV[5],
  'url', ARGV[6], 'body', ARGV[7], 'order', ARGV[8], 'created_ms', ARGV[9],
  'updated_ms', ARGV[10], 'next_ms', ARGV[10], 'state', state, 'attempts', 0,
  'budget_base', 0, 'token', '', 'last_status', '', 'last_error', '')
redis.call('ZADD', p .. 'a:' .. ARGV[3] .. ':' .. ARGV[4], ARGV[9], ARGV[2])
if state == 'delivered' then
  redis.call('HSET', ek, 'last_error', 'no postbackUrl on the charge or the account')
  redis.call('EXPIRE', ek, ARGV[11])
  return 1
end
local ok = p .. 'o:' .. ARGV[8]
if redis.call('RPUSH', ok, ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[1], ARGV[10], ARGV[2])
end
return 1
