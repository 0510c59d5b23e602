-- shard_stats: how one shard's delivery queue stands, for /metrics. Reads only.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:lease   KEYS[3] = <prefix>{s<k>}:dead
-- ARGV = shard key prefix
-- Returns {pending (in a due set: waiting for their first or next attempt, and the shard's
--   stream entries not yet leased, p qn; an event waiting behind an earlier one of the
--   same charge is not counted), delivering, dead, the earliest due time ('' = none): of
--   the due sets, or the oldest entry not yet leased when earlier}; at most 10,000 queues
--   are counted; then, by environment (sandbox, production), 10 more counts:
--   pending deliveries to postback URLs and to webhook endpoints (of the first figure), the
--   deliveries waiting for a disabled endpoint (lane heads in the due sets of p held's
--   queues), the endpoints disabled by pixrelay (state held) and by request (off): each
--   environment's 5 in that order. p held's queues "<env>:<account>:<endpoint id>", at most
--   10,000 of them, are read with their endpoints' state (p ep:<id>).
if #KEYS ~= 3 or #ARGV ~= 1 then
  return redis.error_reply('ERR shard_stats: wants 3 keys and 1 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p = ARGV[1]
-- by[env] = {postback, endpoint, held deliveries, held endpoints, off endpoints}
local by = {sandbox = {0, 0, 0, 0, 0}, production = {0, 0, 0, 0, 0}}
-- the counts of queue q (<env>:<account>:<host or endpoint id>), or nil
local function of_queue(q)
  local env, rest = string.match(q, '^(%a+):[^:]*:(.*)$')
  return by[env], rest
end
local function add_pending(q, n)
  local c, dest = of_queue(q)
  if c then
    local i = string.sub(dest, 1, 4) == 'wep_' and 2 or 1
    c[i] = c[i] + n
  end
end
local pending = 0
for _, q in ipairs(redis.call('ZRANGE', KEYS[1], 0, 9999)) do
  local n = redis.call('ZCARD', p .. 'due:' .. q)
  pending = pending + n
  add_pending(q, n)
end
local backlog = 0
local qn = redis.call('HGETALL', p .. 'qn')
for j = 2, #qn, 2 do
  local n = tonumber(qn[j]) or 0
  backlog = backlog + n
  add_pending(qn[j - 1], n)
end
for _, q in ipairs(redis.call('ZRANGE', p .. 'held', 0, 9999)) do
  local c, ep = of_queue(q)
  if c then
    c[3] = c[3] + redis.call('ZCARD', p .. 'due:' .. q)
    if redis.call('HGET', p .. 'ep:' .. ep, 'state') == 'off' then c[5] = c[5] + 1
    else c[4] = c[4] + 1 end
  end
end
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
local out = {pending + backlog, delivering, redis.call('ZCARD', KEYS[3]), earliest}
for _, env in ipairs({'sandbox', 'production'}) do
  for i = 1, 5 do out[#out + 1] = by[env][i] end
end
return out
