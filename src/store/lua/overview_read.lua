-- overview_read: how the deliveries of one environment, or of one account in it, stand in
-- one shard, for the dashboard's overview (GET /v1/overview). Reads only.
-- KEYS[1] = <prefix>{s<k>}:hosts
-- ARGV[1] = shard key prefix p, [2] = now (ms), [3] = environment, [4] = account ('' = every
--   account of the environment)
-- Reads the counters event_settle keeps per call (lib/overview.lua): p ovm:<minute> of the
-- last 180 minutes and p ovh:<hour> of the last 24 hours (only the scope's fields), what
-- failed in the scope in the current and the previous hour, p ovf:<hour>:<scope>; and the
-- queues: p hosts (at most 10,000 queues, as shard_stats), their due sets p due:<queue>,
-- p qn, the stream p s after the cursor p cur (at most 100 entries), the disabled
-- endpoints' queues p held (at most 1,000). Work: O(queues + 204 buckets + the scope's
-- failing queues), no event read, nothing of the other accounts' counters.
-- Returns {waiting (due or retrying, and stream entries not yet leased), held (the deliveries
--   disabled endpoints keep), the earliest time a waiting one was due ('' = none; of
--   the stream entries, the oldest of the scope among the first 100 after the cursor, else
--   the 100th's), then 180 times 3 (delivered, failed attempts, dead) per minute, oldest
--   first, the current minute last, then the same 3 summed over the last 24 hours (the
--   current hour and the 23 before it), then n, and n times 4 (queue, attempts failed and
--   dead in the current and the previous hour, waiting) of the postback hosts and
--   endpoints that failed then (at most 100), then m, and m times 3 (queue, when it was
--   disabled, deliveries kept) of the disabled endpoints}
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR overview_read: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now, env, account = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local scope = env
if account ~= '' then scope = env .. ':' .. account end
local prefix = scope .. ':'
local function mine(q) return string.sub(q, 1, #prefix) == prefix end

-- waiting: the due sets of the scope's queues and their stream entries not yet leased
local waiting, earliest = 0, nil
local hosts = redis.call('ZRANGE', KEYS[1], 0, 9999, 'WITHSCORES')
for j = 1, #hosts, 2 do
  local q = hosts[j]
  if mine(q) then
    local n = redis.call('ZCARD', p .. 'due:' .. q)
    waiting = waiting + n
    local at = tonumber(hosts[j + 1])
    if n > 0 and (not earliest or at < earliest) then earliest = at end
  end
end
local qn = redis.call('HGETALL', p .. 'qn')
local backlog = {}
local nbacklog = 0
for j = 1, #qn, 2 do
  local n = tonumber(qn[j + 1]) or 0
  if n > 0 and mine(qn[j]) then
    backlog[qn[j]] = n
    nbacklog = nbacklog + n
  end
end
waiting = waiting + nbacklog
if nbacklog > 0 then
  -- the oldest entry of the scope after the cursor: due since it was made
  local cur = redis.call('HGET', p .. 'cur', 'id')
  local entries = redis.call('XRANGE', p .. 's', cur and ('(' .. cur) or '-', '+', 'COUNT', 100)
  local found = nil
  for _, en in ipairs(entries) do
    local m = en[2][2] or ''
    local n1 = string.find(m, '\n', 1, true)
    local n2 = n1 and string.find(m, '\n', n1 + 1, true)
    found = tonumber(string.match(en[1], '^(%d+)'))
    if n2 and mine(string.sub(m, n1 + 1, n2 - 1)) then break end
  end
  if found and (not earliest or found < earliest) then earliest = found end
end

-- held: the deliveries kept for the scope's disabled endpoints
local held, disabled = 0, {}
local hq = redis.call('ZRANGE', p .. 'held', 0, 999, 'WITHSCORES')
for j = 1, #hq, 2 do
  if mine(hq[j]) then
    local n = redis.call('ZCARD', p .. 'due:' .. hq[j])
    held = held + n
    disabled[#disabled + 1] = hq[j]
    disabled[#disabled + 1] = hq[j + 1]
    disabled[#disabled + 1] = n
  end
end

local out = {waiting, held, earliest and string.format('%.0f', earliest) or ''}
local fd, ff, fx = 'd:' .. scope, 'f:' .. scope, 'x:' .. scope
local minute = math.floor(now / 60000)
for m = minute - 179, minute do
  local v = redis.call('HMGET', p .. 'ovm:' .. m, fd, ff, fx)
  out[#out + 1] = tonumber(v[1]) or 0
  out[#out + 1] = tonumber(v[2]) or 0
  out[#out + 1] = tonumber(v[3]) or 0
end
local hour = math.floor(now / 3600000)
local dd, df, dx = 0, 0, 0
for h = hour - 23, hour do
  local v = redis.call('HMGET', p .. 'ovh:' .. h, fd, ff, fx)
  dd, df, dx = dd + (tonumber(v[1]) or 0), df + (tonumber(v[2]) or 0), dx + (tonumber(v[3]) or 0)
end
out[#out + 1], out[#out + 2], out[#out + 3] = dd, df, dx

-- what failed in the current and the previous hour, per queue
local failed, dead, order = {}, {}, {}
for h = hour - 1, hour do
  local f = redis.call('HGETALL', p .. 'ovf:' .. h .. ':' .. scope)
  for j = 1, #f, 2 do
    local kind, q = string.sub(f[j], 1, 2), string.sub(f[j], 3)
    if kind == 'F|' or kind == 'X|' then
      if not failed[q] then
        failed[q], dead[q] = 0, 0
        order[#order + 1] = q
      end
      if kind == 'F|' then
        failed[q] = failed[q] + tonumber(f[j + 1])
      else
        dead[q] = dead[q] + tonumber(f[j + 1])
      end
    end
  end
end
local nfail = math.min(#order, 100)
out[#out + 1] = nfail
for j = 1, nfail do
  local q = order[j]
  out[#out + 1] = q
  out[#out + 1] = failed[q]
  out[#out + 1] = dead[q]
  out[#out + 1] = redis.call('ZCARD', p .. 'due:' .. q) + (backlog[q] or 0)
end
out[#out + 1] = #disabled / 3
for _, v in ipairs(disabled) do out[#out + 1] = v end
return out
