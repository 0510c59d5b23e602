-- event_replay: deliver an event again: same id, fresh attempt budget.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:dead
-- ARGV = shard key prefix, id, now_ms, account ('' = any), env, and optionally the
--   destination: 'postback' (the charge's or the account's postbackUrl), an endpoint id
--   (its delivery to that webhook endpoint, lib/endpoint.lua), or '' (the default:
--   wherever the event is dead; where it is dead nowhere, its postbackUrl)
-- Returns {1 (requeued) | 2 (already due or in flight: nothing to do) | 0 (not found) |
--   3 (no such destination: the event has no delivery to that endpoint, or the endpoint
--   is deleted), then the destinations requeued ('postback', endpoint ids)}.
-- An event of its own hash is made pending again. A stream event without one
-- (lib/event_read.lua), delivered at its first attempt, gets one (spill, lib/event.lua)
-- holding the outcome of its record in p done:<day>, which is dropped; one still pending or
-- being delivered is left alone. Either then takes its turn in its charge's order
-- (order_claim): due now when no earlier event of the charge is unsettled, else after it. A
-- delivery to an endpoint likewise, in its lane; while its endpoint is disabled it waits
-- there, held (lib/endpoint.lua).
--@include event_read
if #KEYS ~= 2 or (#ARGV ~= 5 and #ARGV ~= 6) then
  return redis.error_reply('ERR event_replay: wants 2 keys and 5 or 6 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, id, now = ARGV[1], ARGV[2], ARGV[3]
local dest = ARGV[6] or ''
local ek = p .. 'e:' .. id
local e = redis.call('HMGET', ek, 'state', 'account', 'env', 'order', 'attempts', 'url', 'queue',
  'dests')
local stream -- a stream event without a hash: {sid, fields, view}
if not e[1] then
  -- a stream event: found by its place in its account's listing
  local ms = ARGV[4] ~= '' and redis.call('ZSCORE', p .. 'a:' .. ARGV[4], id)
  if not ms then return {0} end
  local r = event_reader(p)
  local sid, f, ev = reader_entry(r, id, ms)
  local v = sid and stream_view(r, sid, ev)
  if not v or ev.account ~= ARGV[4] or ev.env ~= ARGV[5] then return {0} end
  stream = {sid, f, v}
  e[8] = v.dests
elseif (ARGV[4] ~= '' and e[2] ~= ARGV[4]) or e[3] ~= ARGV[5] then
  return {0}
end

-- the postback destination: 1, or 2 when there is nothing to do
local function replay_postback()
  if stream then
    local sid, f, v = stream[1], stream[2], stream[3]
    if v.state ~= 'delivered' then return 2 end
    -- a fresh budget: attempts and age are counted from now
    local _, q, order = spill(p, sid, f, {'budget_base', v.attempts, 'budget_ms', now,
      'next_ms', now, 'updated_ms', now, 'last_error', '', 'attempts', v.attempts,
      'last_status', v.last_status, 'attempt', v.attempt})
    redis.call('HDEL', done_day_key(p, sid), id)
    if order_claim(p, order, id) then due_add(p, q, id, now) end
    return 1
  end
  if e[1] == 'pending' or e[1] == 'delivering' then return 2 end
  if e[6] == '' then return 2 end
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', ek, 'dead_ms', 'delivered_ms')
  redis.call('PERSIST', ek)
  redis.call('PERSIST', p .. 'log:' .. id)
  -- a fresh budget: attempts and age are counted from now
  redis.call('HSET', ek, 'state', 'pending', 'budget_base', e[5] or '0', 'budget_ms', now,
    'next_ms', now, 'updated_ms', now, 'last_error', '')
  if order_claim(p, e[4], id) then
    due_add(p, e[7] or (e[3] .. ':' .. e[2] .. ':' .. url_host(e[6])), id, now)
  end
  return 1
end

-- the delivery to endpoint `ep`: 1, 2 (nothing to do) or 3 (none, or its endpoint is gone)
local function replay_delivery(ep)
  local did = id .. '/' .. ep
  local dk = p .. 'e:' .. did
  local d = redis.call('HMGET', dk, 'state', 'order', 'queue', 'attempts')
  if not d[1] then return 3 end
  local state = redis.call('HGET', p .. 'ep:' .. ep, 'state')
  if not state then return 3 end
  if d[1] == 'pending' or redis.call('ZSCORE', p .. 'lease', did) then return 2 end
  redis.call('ZREM', KEYS[2], did)
  redis.call('HDEL', dk, 'dead_ms', 'delivered_ms')
  redis.call('PERSIST', dk)
  redis.call('PERSIST', p .. 'log:' .. did)
  redis.call('HSET', dk, 'state', 'pending', 'budget_base', d[4] or '0', 'budget_ms', now,
    'next_ms', now, 'updated_ms', now, 'last_error', '')
  if order_claim(p, d[2], did, nil, true) then
    if state == 'on' then due_add(p, d[3], did, now) else zadd(p .. 'due:' .. d[3], now, did) end
  end
  return 1
end

local out = {2}
local function done(code, what)
  if code == 1 then
    out[1] = 1
    out[#out + 1] = what
  elseif code == 3 and out[1] ~= 1 then
    out[1] = 3
  end
end
if dest == 'postback' then
  done(replay_postback(), 'postback')
elseif dest ~= '' then
  local listed = false
  for ep in string.gmatch(e[8] or '', '%S+') do listed = listed or ep == dest end
  done(listed and replay_delivery(dest) or 3, dest)
else
  -- wherever it is dead; where it is dead nowhere, its postbackUrl
  local dead = (stream and stream[3].state or e[1]) == 'dead'
  if dead then done(replay_postback(), 'postback') end
  for _, d in ipairs(deliveries_of(p, id, e[8])) do
    if d[2][1] == 'dead' then
      dead = true
      done(replay_delivery(d[1]), d[1])
    end
  end
  if not dead then done(replay_postback(), 'postback') end
end
return out
