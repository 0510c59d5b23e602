-- endpoint_expire: the deliveries a disabled webhook endpoint keeps (lib/endpoint.lua: its
-- queue in p held, not leased) are dead once their event is older than the retention: its
-- body is gone with it (the stream is trimmed from then, stream_trim.lua; a hash expires).
-- A lane's next delivery is due since its own event was made (lib/event.lua, next_of), so
-- one call takes a lane's old ones in turn. At most 256 a call, run by the janitor, over at
-- most 1,000 of the queues in p held a call: p held_at (string) is the rank the next call
-- starts at, so that calls go round them all however many endpoints are disabled (those
-- disabled by request stay there, holding nothing, until they are enabled or deleted).
-- Each endpoint whose deliveries died in a call gets one EVENT:OPERATIONAL_DELIVERIES_EXPIRED
-- (lib/operational.lua): how many, and the first 100 events' ids. Deliveries of operational
-- events (lane <endpoint id>:op:<account>) die too but are neither counted nor listed: no
-- operational event is about another's delivery (an endpoint held that takes them would
-- otherwise be given one about its own at every retention).
-- KEYS[1] = <prefix>{s<k>}:held
-- ARGV = shard key prefix, now (ms), the oldest creation time kept (ms), retention (s)
-- Returns how many deliveries died.
--@include endpoint_admin
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR endpoint_expire: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now, oldest, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local WHY = 'kept event-retention-days while its webhook endpoint was disabled'
local n, MOST, SPAN = 0, 256, 1000
local at = tonumber(redis.call('GET', p .. 'held_at') or '') or 0
local held = redis.call('ZRANGE', KEYS[1], at, at + SPAN - 1)
if #held == 0 and at > 0 then
  at = 0
  held = redis.call('ZRANGE', KEYS[1], 0, SPAN - 1)
end
-- the next call: after these, or from the first when these were the last
local next_at = #held == SPAN and at + SPAN or 0
for i, q in ipairs(held) do
  local dk = p .. 'due:' .. q
  local before = n
  local told = {}
  while n < MOST do
    local ids = redis.call('ZRANGEBYSCORE', dk, '-inf', oldest, 'LIMIT', 0, MOST - n)
    if #ids == 0 then break end
    -- out of the due set first: a death may put the next of its lane in it
    redis.call('ZREM', dk, unpack(ids))
    for _, did in ipairs(ids) do
      local lane = redis.call('HGET', p .. 'e:' .. did, 'order')
      if lane then
        delivery_dead(p, did, lane, now, ttl, WHY)
        n = n + 1
        if not string.find(lane, '^wep_[^:]*:op:') then
          told[#told + 1] = '"' .. string.sub(did, 1, (string.find(did, '/', 1, true) or 0) - 1) .. '"'
        end
      end
    end
  end
  -- (the next of a lane was given its due time with the queue's: still held)
  if n > before then redis.call('ZREM', p .. 'hosts', q) end
  local env, account, ep = string.match(q, '^([^:]*):([^:]*):(.*)$')
  if #told > 0 and env then
    local O = op_lib()
    local events, cut = O.list(told, 100)
    O.write(p, env, account, 'EVENT:OPERATIONAL_DELIVERIES_EXPIRED', ep, '{"endpoint":"' ..
      ep .. '","url":' .. O.str(redis.call('HGET', p .. 'ep:' .. ep, 'url')) ..
      ',"reason":"' .. WHY .. '","count":' .. #told .. ',"events":' .. events ..
      ',"truncated":' .. tostring(cut) .. ',"expiredAt":' .. O.time(now) .. '}', now, ttl)
  end
  if n >= MOST then
    -- this queue may hold more: the next call starts with it
    next_at = at + i - 1
    break
  end
end
if next_at > 0 then
  redis.call('SET', p .. 'held_at', next_at)
else
  redis.call('DEL', p .. 'held_at')
end
return n
