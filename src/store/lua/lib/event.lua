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
end

-- event_write: record event `id` and queue it for delivery, in the shard of key prefix `p`
-- (<prefix>{s<k>}:). Its payload is written once, into the event hash; its delivery queue,
-- listing index and per-order list are in the same shard:
--   p e:<id>       hash: the event (body, destination, state, attempts, ...)
--   p a:<account>  zset: the account's events by creation time (listing)
--   p o:<order>    list: the events of one order key (a charge) not yet settled, oldest
--                  first; only its head is due, so they go out one after another
--   p live         string: the channel of live streams (below), absent when none is open
-- Without a destination the event is recorded as delivered nowhere and expires with the
-- retention (ttl seconds). The hash leaves out what its key and its other fields say: its
-- id (the key's), attempts (none: 0), updated_ms and next_ms (none: created_ms); every
-- reader defaults them (docs/event-layout.md).
-- What p live held, looked up once per call (nothing else writes while a script runs).
local live_known = {}
local function event_write(p, id, env, account, etype, url, body, order, now, ttl)
  local ek = p .. 'e:' .. id
  zadd(p .. 'a:' .. account, now, id)
  -- Live streams (GET /v1/events/stream): while a process serves one for an account of this
  -- shard, p live names the pub/sub channel it listens on (set with a TTL, see evstream.h).
  -- Without it this costs one GET of a missing key per call.
  local live = live_known[p]
  if live == nil then
    live = redis.call('GET', p .. 'live') or false
    live_known[p] = live
  end
  if live then
    redis.call('PUBLISH', live, id .. '\n' .. env .. '\n' .. account .. '\n' .. now .. '\n' ..
      etype .. '\n' .. url .. '\n' .. body)
  end
  if url == '' then
    redis.call('HSET', ek, 'env', env, 'account', account, 'type', etype, 'url', '',
      'body', body, 'order', order, 'created_ms', now, 'state', 'delivered',
      'last_error', 'no postbackUrl on the charge or the account')
    redis.call('EXPIRE', ek, ttl)
    return
  end
  local q = env .. ':' .. account .. ':' .. url_host(url)
  redis.call('HSET', ek, 'env', env, 'account', account, 'type', etype, 'url', url,
    'queue', q, 'body', body, 'order', order, 'created_ms', now, 'state', 'pending')
  if redis.call('RPUSH', p .. 'o:' .. order, id) == 1 then
    due_add(p, q, id, now)
  end
end
