-- shard_stats: how one shard's delivery queue stands, for /metrics. Reads only.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:lease   KEYS[3] = <prefix>{s<k>}:dead
-- ARGV = shard key prefix
-- Returns {pending (in a due set: waiting for their first or next attempt, and the shard's
--   stream entries not yet leased, p qn; an event waiting behind an earlier one of the
--   same charge is not counted), delivering, dead, the earliest due time ('' = none): of
--   the due sets, or the oldest entry not yet leased when earlier}; at most 10,000 queues
--   are counted.
if #KEYS ~= 3 or #ARGV ~= 1 then
  return redis.error_reply('ERR shard_stats: wants 3 keys and 1 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p = ARGV[1]
local pending = 0
for _, q in ipairs(redis.call('ZRANGE', KEYS[1], 0, 9999)) do
  pending = pending + redis.call('ZCARD', p .. 'due:' .. q)
end
local backlog = 0
for _, n in ipairs(redis.call('HVALS', p .. 'qn')) do backlog = backlog + (tonumber(n) or 0) end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local earliest = first[2] or ''
if backlog > 0 then
  -- the first entry after the cursor: due since it was made
  local cur = redis.call('HGET', p .. 'cur', 'id')
  local next_entry = redis.call('XRANGE', p .. 's', cur and ('(' .. cur) or '-', '+', 'COUNT', 1)
  if next_entry[1] then
    local ms = string.match(next_entry[1][1], '^(%d+)')
    if earliest == '' or tonumber(ms) < tonumber(earliest) then earliest = ms end
  end
end
-- delivering: the members of the lease set, but a batch of stream events (p lb) counts its
-- leases not settled
local batches, delivering = redis.call('HGETALL', p .. 'lb'), redis.call('ZCARD', KEYS[2])
for j = 2, #batches, 2 do delivering = delivering - 1 + (tonumber(batches[j]) or 0) end
return {pending + backlog, delivering, redis.call('ZCARD', KEYS[3]), earliest}
