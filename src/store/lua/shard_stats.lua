-- shard_stats: how one shard's delivery queue stands, for /metrics. Reads only.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:lease   KEYS[3] = <prefix>{s<k>}:dead
-- ARGV = shard key prefix
-- Returns {pending (in a due set: waiting for their first or next attempt; an event
--   waiting behind an earlier one of the same charge is not counted), delivering, dead, the
--   earliest due time ('' = none)}; at most 10,000 queues are counted.
if #KEYS ~= 3 or #ARGV ~= 1 then
  return redis.error_reply('ERR shard_stats: wants 3 keys and 1 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local pending = 0
for _, q in ipairs(redis.call('ZRANGE', KEYS[1], 0, 9999)) do
  pending = pending + redis.call('ZCARD', ARGV[1] .. 'due:' .. q)
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {pending, redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), first[2] or ''}
