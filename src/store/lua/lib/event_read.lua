-- Reading an event of either layout (docs/event-layout.md) as the hash of version 2 would
-- say it: event_get, event_list, event_after and event_replay read through these.
-- Whenever p e:<id> exists it is authoritative. A stream event without one (layout 3,
-- lib/event.lua) is its entry of p s, found by its account's listing score (the entry's
-- ms), and its state is derived:
--   * after the cursor (p cur's id): pending, never leased, attempts 0;
--   * else delivered when p done:<day> has it, delivering when its charge's p busy names
--     it (or the head of its order list, p busy '+': it was leased and not settled; any
--     outcome but a first delivery, or a lease that ran out, gives it a hash), and gone
--     when neither (its hash or its done record expired with the retention; the entry
--     lingers until the janitor trims it).
--@include event

-- entry_event: the event of a stream entry's fields `f` (m, b and maybe d: lib/event.lua),
-- as a table {id, env, account, type, url, order, body, queue, dests}
local function entry_event(f)
  local order, q, id, env, account, etype, url = entry_meta(f[2])
  return {id = id, env = env, account = account, type = etype, url = url, order = order,
    body = f[4], queue = q, dests = f[5] == 'd' and f[6] or nil}
end

-- The deliveries of an event to webhook endpoints (lib/endpoint.lua), as readers show them.
-- DELIVERY_FIELDS: what each tells, in this order (a delivery's hash; state read as
-- delivering while it is pending and in the lease set, as an event's).
local DELIVERY_FIELDS = {'state', 'attempts', 'created_ms', 'updated_ms', 'next_ms',
  'delivered_ms', 'dead_ms', 'last_status', 'last_error'}
-- deliveries_of: the deliveries of event `id` to the endpoints `dests` (endpoint ids
-- separated by spaces: its entry's field d or its hash's dests; nil = none), each
-- {endpoint id, its DELIVERY_FIELDS values ('' when absent)}; one whose hash is gone (its
-- retention) is left out
local function deliveries_of(p, id, dests)
  local out = {}
  if not dests or dests == '' then return out end
  for ep in string.gmatch(dests, '%S+') do
    local did = id .. '/' .. ep
    local v = redis.call('HMGET', p .. 'e:' .. did, unpack(DELIVERY_FIELDS))
    if v[1] then
      if v[1] == 'pending' and redis.call('ZSCORE', p .. 'lease', did) then v[1] = 'delivering' end
      for j = 1, #DELIVERY_FIELDS do v[j] = v[j] or '' end
      out[#out + 1] = {ep, v}
    end
  end
  return out
end

-- A reader of shard prefix `p` for one call: the entries of each ms read once (a page of
-- events made together shares ms), the cursor read once.
local function event_reader(p)
  return {p = p, by_ms = {}, cur = nil}
end

-- reader_entry: the stream entry of event `id` created at `ms` (its listing score):
-- sid, fields, event (entry_event), or nil when the stream holds none
local function reader_entry(r, id, ms)
  local l = r.by_ms[ms]
  if not l then
    l = {}
    for _, en in ipairs(redis.call('XRANGE', r.p .. 's', ms, ms)) do
      local ev = entry_event(en[2])
      if ev.id then l[ev.id] = {en[1], en[2], ev} end
    end
    r.by_ms[ms] = l
  end
  local e = l[id]
  if e then return e[1], e[2], e[3] end
  return nil
end

-- reader_consumed: whether entry `sid` was leased or spilled (at or before the cursor)
local function reader_consumed(r, sid)
  if r.cur == nil then r.cur = redis.call('HGET', r.p .. 'cur', 'id') or false end
  return r.cur and sid_at_or_before(sid, r.cur) or false
end


-- stream_view: the fields a hash of version 2 would hold for stream event `ev` (entry
-- `sid`) that has no hash, as a table (field -> value), state derived; nil when it is gone.
-- Delivered: its done record (settled ms, attempts, last status, attempt json, last error).
local function stream_view(r, sid, ev)
  local ms = sid_ms(sid)
  local v = {env = ev.env, account = ev.account, type = ev.type, url = ev.url,
    queue = ev.queue, body = ev.body, order = ev.order, created_ms = ms, state = 'pending',
    sid = sid, dests = ev.dests}
  if not reader_consumed(r, sid) then return v end
  local d = redis.call('HGET', done_day_key(r.p, sid), ev.id)
  if d then
    local parts, from = {}, 1
    for _ = 1, 4 do
      local t = string.find(d, '\t', from, true)
      if not t then break end
      parts[#parts + 1] = string.sub(d, from, t - 1)
      from = t + 1
    end
    parts[#parts + 1] = string.sub(d, from)
    v.state = 'delivered'
    v.updated_ms, v.delivered_ms = parts[1], parts[1]
    v.attempts, v.last_status = parts[2] or '1', parts[3] or ''
    v.attempt, v.last_error = parts[4] or '', parts[5] or ''
    return v
  end
  local b = redis.call('HGET', r.p .. 'busy', ev.order)
  if b == ev.id or (b == '+' and redis.call('LINDEX', r.p .. 'o:' .. ev.order, 0) == ev.id) then
    v.state = 'delivering'
    return v
  end
  return nil
end

-- the order HGETALL of a hash of version 2 would list them in
local VIEW_FIELDS = {'env', 'account', 'type', 'url', 'queue', 'body', 'order', 'created_ms',
  'state', 'sid', 'updated_ms', 'delivered_ms', 'attempts', 'last_status', 'last_error',
  'attempt', 'dests'}

-- view_flat: a stream_view as HGETALL's flat field/value list
local function view_flat(v)
  local out = {}
  for _, k in ipairs(VIEW_FIELDS) do
    if v[k] then
      out[#out + 1] = k
      out[#out + 1] = v[k]
    end
  end
  return out
end
