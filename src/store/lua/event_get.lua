-- event_get: one event of an account as the hash of version 2 would hold it, whichever
-- layout it was written in (lib/event_read.lua), with its attempt log. Reads only.
-- KEYS[1] = <prefix>{s<k>}:lease
-- ARGV = shard key prefix, event id, account
-- Returns {fields, log, deliveries}: fields is the flat field/value list HGETALL of its
-- hash gives (empty when there is no such event of the account's listing), with `state`
-- derived where it is not stored: a pending event in the lease set reads `delivering`
-- (leasing writes nothing into the event); log is its earlier attempts, oldest first (the
-- latest is its field `attempt`); deliveries are its deliveries to webhook endpoints
-- (lib/endpoint.lua), each {endpoint id, its url ('' when the endpoint is gone), the
-- DELIVERY_FIELDS values of lib/event_read.lua, its latest attempt, its earlier ones}.
-- One script, so what it reads is one moment: a lease dropped with its outcome recorded is
-- never seen as neither.
--@include event_read
if #KEYS ~= 1 or #ARGV ~= 3 then
  return redis.error_reply('ERR event_get: wants 1 keys and 3 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, id, account = ARGV[1], ARGV[2], ARGV[3]
-- the deliveries to webhook endpoints, with each's endpoint's url and attempt log
local function deliveries(dests)
  local out = {}
  for _, d in ipairs(deliveries_of(p, id, dests)) do
    local did = id .. '/' .. d[1]
    out[#out + 1] = {d[1], redis.call('HGET', p .. 'ep:' .. d[1], 'url') or '', d[2],
      redis.call('HGET', p .. 'e:' .. did, 'attempt') or '',
      redis.call('LRANGE', p .. 'log:' .. did, 0, -1)}
  end
  return out
end
local h = redis.call('HGETALL', p .. 'e:' .. id)
if #h > 0 then
  local state_at
  for j = 1, #h - 1, 2 do
    if h[j] == 'state' then state_at = j + 1 end
  end
  if not state_at or h[state_at] == 'pending' then
    local leased = redis.call('ZSCORE', KEYS[1], id)
    if leased and state_at then
      h[state_at] = 'delivering'
    elseif leased then
      h[#h + 1] = 'state'
      h[#h + 1] = 'delivering'
    end
  end
  local dests
  for j = 1, #h - 1, 2 do
    if h[j] == 'dests' then dests = h[j + 1] end
  end
  return {h, redis.call('LRANGE', p .. 'log:' .. id, 0, -1), deliveries(dests)}
end
local ms = redis.call('ZSCORE', p .. 'a:' .. account, id)
if not ms then return {{}, {}, {}} end
local r = event_reader(p)
local sid, _, ev = reader_entry(r, id, ms)
local v = sid and stream_view(r, sid, ev)
if not v then return {{}, {}, {}} end
return {view_flat(v), {}, deliveries(v.dests)}
