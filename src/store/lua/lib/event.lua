-- The delivery queue of a shard is split by environment, account and destination host, so
-- that a dispatcher leases exactly what each destination, tenant and environment may have
-- now (no event of a busy host is leased only to be put back, and one slow host or tenant
-- cannot fill the leases others need):
--   p hosts          zset: queue "<env>:<account>:<host>" -> when its earliest due event may
--                    be attempted
--   p due:<queue>    zset: event id -> when it may next be attempted
-- The host is the URL's authority without user info, lower-cased ("example.com:8443");
-- dispatch.c computes it the same way (dispatch_url_host). An event keeps its queue's name
-- in its field `queue`.
local function url_host(url)
  local a = string.match(url, '^[%a][%w+.-]*://([^/?#]*)') or ''
  local at = string.find(a, '@[^@]*$')
  if at then a = string.sub(a, at + 1) end
  return string.lower(a)
end

-- Sorted-set additions of one call, gathered between due_batch() and due_flush(p) and
-- written with one ZADD per key: a call that queues many events of one destination or one
-- account writes each of those sets once (one command and one AOF entry, not one per
-- event). Nothing in between may read a set it added to. Outside a batch, at once.
local zadd_later = nil -- key -> {score, member, score, member, ...}
local function zadd(key, score, member)
  if not zadd_later then
    redis.call('ZADD', key, score, member)
    return
  end
  local l = zadd_later[key]
  if not l then
    l = {}
    zadd_later[key] = l
  end
  l[#l + 1] = score
  l[#l + 1] = member
end

-- Counts of p qn, gathered in a batch like the sorted sets.
local qn_later = nil
local function qn_add(p, q, n)
  if not qn_later then
    if redis.call('HINCRBY', p .. 'qn', q, n) <= 0 then redis.call('HDEL', p .. 'qn', q) end
    return
  end
  qn_later[q] = (qn_later[q] or 0) + n
end

local function qn_flush(p)
  local later = qn_later
  qn_later = nil
  if not later then return end
  for q, n in pairs(later) do
    if n ~= 0 and redis.call('HINCRBY', p .. 'qn', q, n) <= 0 then
      redis.call('HDEL', p .. 'qn', q)
    end
  end
end

-- due_add: event `id` of queue `q` may be attempted at `at` (ms). In a batch, the queues'
-- times in p hosts are gathered too and written once per queue.
local due_later = nil
local function due_add(p, q, id, at)
  zadd(p .. 'due:' .. q, at, id)
  if due_later then
    local t = due_later[q]
    at = tonumber(at)
    if not t or at < t then due_later[q] = at end
  else
    redis.call('ZADD', p .. 'hosts', 'LT', at, q)
  end
end

local function due_batch()
  due_later = {}
  zadd_later = {}
  qn_later = {}
end

-- ZADD key [LT] score member ... in pieces of at most 500 pairs.
local function zadd_all(key, lt, pairs_list)
  for i = 1, #pairs_list, 1000 do
    local j = math.min(i + 999, #pairs_list)
    if lt then
      redis.call('ZADD', key, 'LT', unpack(pairs_list, i, j))
    else
      redis.call('ZADD', key, unpack(pairs_list, i, j))
    end
  end
end

local function due_flush(p)
  local later = zadd_later
  zadd_later = nil
  for key, l in pairs(later) do zadd_all(key, false, l) end
  local args = {}
  for q, at in pairs(due_later) do
    args[#args + 1] = at
    args[#args + 1] = q
  end
  if #args > 0 then zadd_all(p .. 'hosts', true, args) end
  due_later = nil
  qn_flush(p)
end

-- Layout 3 (docs/event-layout.md): an event with a destination is appended once to its
-- shard's stream, the entry holding everything a delivery needs; the stream is the queue of
-- first attempts, read from a cursor. An event leaves the stream for a hash of its own
-- (spill: p e:<id>, the layout of version 2) only when it must wait: a retry, a lease that
-- ran out, a destination or tenant over its budget while others could go, a later event of
-- a charge whose earlier one is not settled, a replay, a dead letter.
--   p s          stream: one entry per event, two fields: m (what a delivery needs but
--                the body: order key, queue, id, env, account, type, url, joined by
--                '\n', in that order: entry_meta) and b (the body); created_ms is the
--                entry id's ms. Two fields, not seven: each value crossing between
--                Redis and Lua costs, and the dispatcher splits m itself
--   p cur        hash: id = the last entry the leases have consumed (every entry up to it
--                was leased or spilled), n = entries consumed in all
--   p qn         hash: queue -> its entries after the cursor
--   p busy       hash: order key -> the one event of that order not settled (no list), or
--                '+' when p o:<order> lists them (head first); absent when none is. And
--                one field of its own, '' (no order key is empty): BUSY_TABLE below
--   p done:<day> hash: event id -> the outcome of a stream event delivered at its first
--                attempt ("<settled ms>\t<attempts>\t<status>\t<attempt json>\t<error>"),
--                day = the entry's ms / 86400000; expires retention after that day
--   p nl         string: how many orders of p busy are '+' (absent: none)
--   p o:<order>  list: as in version 2 (head = the one in flight), kept only while an
--                order has more than one event not settled; lists of version 2 have no
--                p busy entry and are found with EXISTS until p v3 exists
--   p v3         string: this shard holds no list of version 2 (set by the lease once no
--                event could head one: none due, none leased but stream entries)
-- BUSY_TABLE: the value of p busy's field '', longer than Redis' hash-max-listpack-value
-- (64 by default), written with every lease's HSET of the orders it took. A hash holding
-- such a value is a hash table, and stays one while the field is there: p busy holds the
-- orders of every event in flight (a lease call adds up to 128 and looks each up), and in
-- a listpack every lookup and every field added scans it whole (about 4,000 instructions
-- an event, a twentieth of a delivery: docs/performance.md). The field costs one entry.
local BUSY_TABLE = 'keeps this hash a hash table (a value over 64 bytes): it is looked up by ' ..
  'field for every event in flight (pixrelay)'
-- the ms of a stream entry id ("<ms>-<seq>"), as text
local function sid_ms(sid)
  return string.sub(sid, 1, (string.find(sid, '-', 1, true) or (#sid + 1)) - 1)
end

-- sid_at_or_before: whether stream entry id `a` ("<ms>-<seq>") is at or before `b`
local function sid_at_or_before(a, b)
  local am, bm = tonumber(sid_ms(a)), tonumber(sid_ms(b))
  if am ~= bm then return am < bm end
  return (tonumber(string.sub(a, #sid_ms(a) + 2)) or 0) <= (tonumber(string.sub(b, #sid_ms(b) + 2)) or 0)
end

-- done_day_key: the key of p done:<day> for entry `sid` (day = its ms / DAY_MS)
local DAY_MS = 86400000
local function done_day_key(p, sid)
  return p .. 'done:' .. math.floor(tonumber(sid_ms(sid)) / DAY_MS)
end

-- order_listed: `order` has a list now (p busy '+'); p nl counts such orders, so that a
-- call settling events whose orders have no list need not read p busy.
local function order_listed(p, order)
  redis.call('HSET', p .. 'busy', order, '+')
  redis.call('INCR', p .. 'nl')
end

-- The order of a charge's events. order_claim: event `id` (a hash already, or about to be
-- leased) is the next of `order` to go when none before it is unsettled: true; else it is
-- put at the end of the order's list and false. `b` is p busy's value when known (false =
-- known absent, nil = not known); `fresh`: the order cannot have a list of version 2 (a
-- lane of an endpoint's, lib/endpoint.lua).
local function order_claim(p, order, id, b, fresh)
  if b == nil then b = redis.call('HGET', p .. 'busy', order) or false end
  local ok = p .. 'o:' .. order
  if not b then
    if fresh or redis.call('EXISTS', ok) == 0 then
      redis.call('HSET', p .. 'busy', order, id)
      return true
    end
    redis.call('RPUSH', ok, id)
  elseif b == '+' then
    redis.call('RPUSH', ok, id)
    return false
  else
    redis.call('RPUSH', ok, b, id)
  end
  order_listed(p, order)
  return false
end

-- the next event of a settled event's order key may go now. The settled one is the head
-- of its order list: one LPOP of two takes it and shows the next, put back if there is
-- one; an event alone in its list costs that one command. Returns the next (or nil).
local function next_of(p, order, id, now)
  local ok = p .. 'o:' .. order
  local popped = redis.call('LPOP', ok, 2)
  local nxt
  if popped and popped[1] == id then
    nxt = popped[2]
    if nxt then redis.call('LPUSH', ok, nxt) end
  else
    -- not its head (only if the list was changed by hand): as it was, then the long way
    for j = #(popped or {}), 1, -1 do redis.call('LPUSH', ok, popped[j]) end
    redis.call('LREM', ok, 1, id)
    nxt = redis.call('LINDEX', ok, 0)
  end
  if nxt then
    local n = redis.call('HMGET', p .. 'e:' .. nxt, 'next_ms', 'queue')
    local due = tonumber(n[1] or now)
    if not n[1] and n[2] and string.find(n[2], ':wep_', 1, true) then
      -- a delivery to an endpoint never attempted (lib/endpoint.lua): due since its event
      -- was made, from where the retention of a disabled endpoint's deliveries counts
      due = tonumber(redis.call('HGET', p .. 'e:' .. nxt, 'created_ms')) or tonumber(now)
    elseif due < tonumber(now) then
      due = tonumber(now)
    end
    if n[2] then due_add(p, n[2], nxt, due) end
  end
  return nxt
end

-- order_release: event `id` of `order` is settled (delivered or dead): the next one goes.
-- `b` as in order_claim.
local function order_release(p, order, id, now, b)
  if b == nil then b = redis.call('HGET', p .. 'busy', order) or false end
  if b == id then
    redis.call('HDEL', p .. 'busy', order)
  elseif b == '+' then
    if not next_of(p, order, id, now) then
      redis.call('HDEL', p .. 'busy', order)
      if redis.call('DECR', p .. 'nl') <= 0 then redis.call('DEL', p .. 'nl') end
    end
  elseif not b then
    -- a list of version 2 (or none)
    next_of(p, order, id, now)
  end
end

--@include endpoint

-- entry_meta: the parts of a stream entry's field m: order, queue, id, env, account,
-- type, url
local function entry_meta(m)
  local parts, from = {}, 1
  for _ = 1, 6 do
    local nl = string.find(m, '\n', from, true)
    if not nl then break end
    parts[#parts + 1] = string.sub(m, from, nl - 1)
    from = nl + 1
  end
  parts[#parts + 1] = string.sub(m, from)
  return parts[1], parts[2], parts[3], parts[4], parts[5], parts[6], parts[7]
end

-- stream_entry: the fields of entry `sid` of p s (nil when trimmed)
local function stream_entry(p, sid)
  local r = redis.call('XRANGE', p .. 's', sid, sid)
  if r[1] then return r[1][2] end
  return nil
end

-- spill: give stream entry `sid` (its fields `f`) a hash of its own, pending, with the
-- extra field/value pairs `extra`. Returns its id, queue and order.
local function spill(p, sid, f, extra)
  local order, q, id, env, account, etype, url = entry_meta(f[2])
  local args = {p .. 'e:' .. id, 'env', env, 'account', account, 'type', etype, 'url', url,
    'queue', q, 'body', f[4], 'order', order, 'created_ms', sid_ms(sid), 'state', 'pending',
    'sid', sid}
  -- the endpoints it went to besides (its field d)
  if f[5] == 'd' then
    args[#args + 1] = 'dests'
    args[#args + 1] = f[6]
  end
  for _, v in ipairs(extra) do args[#args + 1] = v end
  redis.call('HSET', unpack(args))
  return id, q, order
end

-- account_info: what event_write reads of account `account` of `env`, once per call:
-- {url = its postback_url ('' = none), fan = its endpoints that take events (fanout_parse of
-- its field fanout, lib/endpoint.lua's parse), or false when it has none}. One HMGET: an account
-- without endpoints costs what its postback_url alone did.
local acct_known = {}
local function account_info(p, env, account)
  local k = p .. env .. '\n' .. account
  local a = acct_known[k]
  if not a then
    local v = redis.call('HMGET', p .. 'acct:' .. env .. ':' .. account, 'postback_url', 'fanout')
    a = {url = v[1] or '', fan = v[2] and ep_lib().parse(v[2]) or false}
    acct_known[k] = a
  end
  return a
end

-- event_write: record event `id` and queue it for delivery, in the shard of key prefix `p`
-- (<prefix>{s<k>}:): one XADD of p s (above), its place in the account's listing
--   p a:<account>  zset: the account's events by creation time (the entry's ms)
-- and one more to deliver in its queue's count (p qn).
--   p live         string: the channel of live streams (below), absent when none is open
-- Without a destination the event is a hash recorded as delivered nowhere, and expires
-- with the retention (ttl seconds). To each endpoint of the account whose filter takes its
-- type it goes too (lib/endpoint.lua): the ids of those endpoints are the entry's field d
-- (or the hash's field dests), and each has a delivery of its own that refers to it.
-- What p live held, looked up once per call (nothing else writes while a script runs).
local live_known = {}
-- event_write_mid: the same for a destination `d` of account_dest (below), given the middle
-- of the entry's meta as the caller has it, mid = id '\n' env '\n' account '\n' type (so
-- that one string is built per event besides its body: the meta).
local function event_write_mid(p, id, d, mid, body, order, now, ttl)
  local created = now
  local url = d.url
  -- the account's endpoints that take this event (d.fan false: it has none, and this costs
  -- nothing more)
  local eps, dests, sid
  if d.fan then eps, dests = ep_lib().taking(d.fan, string.sub(mid, #id + #d.ea + 3)) end
  if url ~= '' then
    if dests then
      sid = redis.call('XADD', p .. 's', '*', 'm', order .. '\n' .. d.q .. '\n' .. mid ..
        '\n' .. url, 'b', body, 'd', dests)
    else
      sid = redis.call('XADD', p .. 's', '*', 'm', order .. '\n' .. d.q .. '\n' .. mid ..
        '\n' .. url, 'b', body)
    end
    created = sid_ms(sid)
    qn_add(p, d.q, 1)
  end
  zadd(d.listing, created, id)
  -- Live streams (GET /v1/events/stream): while a process serves one for an account of this
  -- shard, p live names the pub/sub channel it listens on (set with a TTL, see evstream.h).
  -- Without it this costs one GET of a missing key per call.
  local live = live_known[p]
  if live == nil then
    live = redis.call('GET', p .. 'live') or false
    live_known[p] = live
  end
  local etype
  if live or url == '' then etype = string.sub(mid, #id + #d.ea + 3) end
  if live then
    redis.call('PUBLISH', live, id .. '\n' .. d.ea .. '\n' .. created .. '\n' ..
      etype .. '\n' .. url .. '\n' .. body)
  end
  if url == '' then
    local ek = p .. 'e:' .. id
    redis.call('HSET', ek, 'env', d.env, 'account', d.account, 'type', etype, 'url', '',
      'body', body, 'order', order, 'created_ms', now, 'state', 'delivered',
      'last_error', 'no postbackUrl on the charge or the account')
    if dests then redis.call('HSET', ek, 'dests', dests) end
    redis.call('EXPIRE', ek, ttl)
  end
  if eps then
    for _, t in ipairs(eps) do
      ep_lib().write(p, id, sid or '', t.id, t.state, d.env, d.account, order, created, now)
    end
  end
end

-- ea_split: the env and account of ea = env .. '\n' .. account
local function ea_split(ea)
  local n = string.find(ea, '\n', 1, true)
  return string.sub(ea, 1, n - 1), string.sub(ea, n + 1)
end

-- account_dest: where events of `account` in `env` go to `url`, remembered per call by
-- ea = env .. '\n' .. account (as the meta holds them) and url: {env, account, ea, url,
-- q = its queue (lib above; none without a url), listing = p a:<account>, fan = its
-- endpoints (account_info)}.
local dest_known = {}
local function account_dest(p, ea, env, account, url)
  local by_url = dest_known[url]
  if not by_url then
    by_url = {h = url ~= '' and url_host(url) or ''}
    dest_known[url] = by_url
  end
  local d = by_url[ea]
  -- (a call writes into one shard; its prefix is checked all the same)
  if not d or d.p ~= p then
    if not env then env, account = ea_split(ea) end
    d = {p = p, env = env, account = account, ea = ea, url = url, listing = p .. 'a:' .. account,
      fan = account_info(p, env, account).fan}
    if url ~= '' then d.q = env .. ':' .. account .. ':' .. by_url.h end
    by_url[ea] = d
  end
  return d
end

local function event_write(p, id, env, account, etype, url, body, order, now, ttl)
  local ea = env .. '\n' .. account
  event_write_mid(p, id, account_dest(p, ea, env, account, url), id .. '\n' .. ea .. '\n' ..
    etype, body, order, now, ttl)
end

-- event_write_operational: record operational event `id` (its type `etype`, one of
-- EVENT:OPERATIONAL_...; `data` its JSON) of `account` in `env`: listed with the account's
-- events, and delivered only to its webhook endpoints that name operational types
-- (lib/endpoint.lua), never to a postbackUrl. Its order key, so its lane at each endpoint,
-- is the account's operational one, op:<account>. The caller gives the event's id (an
-- evt_ id of the account's shard, keyspace.h's ks_event_id).
local function event_write_operational(p, id, env, account, etype, data, now, ttl)
  event_write(p, id, env, account, etype, '', '{"id":"' .. id .. '","event":"' .. etype ..
    '","data":' .. data .. '}', 'op:' .. account, now, ttl)
end
