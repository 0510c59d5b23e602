-- event_replay: deliver an event again: same id, fresh attempt budget.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:dead
-- ARGV = shard key prefix, id, now_ms, account ('' = any), env
-- Returns 1 (requeued), 2 (already due or in flight: nothing to do), 0 (not found).
-- An event of its own hash is made pending again. A stream event without one
-- (lib/event_read.lua), delivered at its first attempt, gets one (spill, lib/event.lua)
-- holding the outcome of its record in p done:<day>, which is dropped; one still pending or
-- being delivered is left alone. Either then takes its turn in its charge's order
-- (order_claim): due now when no earlier event of the charge is unsettled, else after it.
--@include event_read
if #KEYS ~= 2 or #ARGV ~= 5 then
  return redis.error_reply('ERR event_replay: wants 2 keys and 5 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, id, now = ARGV[1], ARGV[2], ARGV[3]
local ek = p .. 'e:' .. id
local e = redis.call('HMGET', ek, 'state', 'account', 'env', 'order', 'attempts', 'url', 'queue')
if not e[1] then
  -- a stream event: found by its place in its account's listing
  local ms = ARGV[4] ~= '' and redis.call('ZSCORE', p .. 'a:' .. ARGV[4], id)
  if not ms then return 0 end
  local r = event_reader(p)
  local sid, f, ev = reader_entry(r, id, ms)
  local v = sid and stream_view(r, sid, ev)
  if not v or ev.account ~= ARGV[4] or ev.env ~= ARGV[5] then return 0 end
  if v.state ~= 'delivered' then return 2 end
  -- a fresh budget: attempts and age are counted from now
  local _, q, order = spill(p, sid, f, {'budget_base', v.attempts, 'budget_ms', now,
    'next_ms', now, 'updated_ms', now, 'last_error', '', 'attempts', v.attempts,
    'last_status', v.last_status, 'attempt', v.attempt})
  redis.call('HDEL', done_day_key(p, sid), id)
  if order_claim(p, order, id) then due_add(p, q, id, now) end
  return 1
end
if (ARGV[4] ~= '' and e[2] ~= ARGV[4]) or e[3] ~= ARGV[5] then return 0 end
if e[1] == 'pending' or e[1] == 'delivering' then return 2 end
if e[6] == '' then return 2 end
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', ek, 'dead_ms', 'delivered_ms')
redis.call('PERSIST', ek)
redis.call('PERSIST', p .. 'log:' .. id)
-- a fresh budget: attempts and age are counted from now
redis.call('HSET', ek, 'state', 'pending', 'budget_base', e[5] or '0', 'budget_ms', now, 'next_ms', now,
  'updated_ms', now, 'last_error', '')
if order_claim(p, e[4], id) then
  due_add(p, e[7] or (e[3] .. ':' .. e[2] .. ':' .. url_host(e[6])), id, now)
end
return 1
