-- event_settle: record the outcomes of delivery attempts and lease the next due events of
-- one shard, in one call: a dispatcher at saturation spends one round trip on many
-- deliveries, and leases exactly what each destination host can take.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:lease
-- KEYS[3] = <prefix>{s<k>}:dead
-- ARGV[1] = shard key prefix, [2] = now (ms), [3] = lease (ms), [4] = how many to lease at
--   most, [5] = token of this lease (its end, [2] + [3]: the score its leases get in the
--   lease set, as written), [6] = attempt log cap, [7] = retention (seconds), [8] = how many
--   events of one host to lease at most, unless listed, [9] = number h of hosts listed,
--   [10] = number n of outcomes, [11] = how many events of one account to lease at most,
--   unless listed, [12] = number a of accounts listed, [13] = how many sandbox events to
--   lease at most, [14] = how many production events, [15] = number k of stream events
--   delivered at their first attempt, then h pairs (host, how many of its events to lease
--   at most), a pairs (account, how many of its events), then n times 11:
--   event id, token of its lease (its end; a stream event's: its batch), outcome
--   (delivered | retry | dead | release), next attempt (ms), HTTP status ('' = none),
--   error text, attempt log entry (JSON), and
--   what its lease answered: the attempt's number, the order key, the queue, the stream
--   entry ('' = an event of its own hash); then k times 6, the outcome of a stream event
--   delivered at its first attempt: stream entry, its batch, event id, order key, its
--   record in p done:<day> ("<when>\t<attempts>\t<status>\t<attempt json>\t<error>")
--   and its queue (the overview's counters: lib/overview.lua); and optionally, the stream entries the dispatcher read itself (XRANGE from `from`,
--   outside the script, so that their bodies never cross into Lua): `from` (the entry it
--   read after, exclusive; '' = the stream's start), e, then e times 4: entry, order key,
--   queue, event id (the head of its meta). They are taken when `from` is at or before
--   the cursor (then those after the cursor are exactly the stream's next entries); else
--   the script reads the stream itself, as without them.
-- An outcome counts only from the holder of the lease (a late answer after the lease ran
-- out, and another process leased the event, is ignored). A delivered or dead event and its
-- log expire after the retention; the dead set forgets what is older. A lease that ran out
-- (its dispatcher died or stalled) makes the event due again.
-- Returns {outcomes recorded, when the next event is due ('' = none) when nothing was
--   leased, then for each leased event 5 fields: its stream entry ('' = none), its meta
--   (order key, queue, id, env, account, type, url, joined by '\n': a stream entry's field
--   m, lib/event.lua), body, then for an event of its own hash its attempt's number,
--   budget_base and budget start (created_ms, or the last replay) joined by '\t', '' for a
--   stream event (1, 0, the entry's ms), then the account's signing secret, previous
--   signing secret and compat secret joined by '\n'} (each value out of the script costs
--   about as much as a field's write: the fewer, the better, docs/performance.md); a
--   stream event of an entry the dispatcher gave has '' as meta and body (it has them).
--   With entries given (or `from` alone), one more value at the end: the cursor after
--   this call ('' = none yet).
-- Events are leased first from the due sets (retries, events that waited), then from the
-- shard's stream (first attempts, docs/event-layout.md): in arrival order from the
-- cursor, as long as each one's host, account and environment may take it. One over its
-- budget stops the reading, unless another queue with entries in the stream could go: then
-- it waits in its due set (spill) and the reading goes on.
-- Last, optionally, the settings of webhook endpoints (lib/endpoint.lua): 'endpoints', how
-- long an endpoint must have failed every attempt to be disabled (ms), and how many attempts
-- in a row at least (defaults 432000000 and 10).
--@include endpoint_admin
--@include overview
local fixed = #ARGV >= 15 and 15 + 2 * tonumber(ARGV[9]) + 2 * tonumber(ARGV[12]) +
  11 * tonumber(ARGV[10]) + 6 * tonumber(ARGV[15])
local nargs = #ARGV
local disable_after, disable_min = 432000000, 10
if fixed and nargs >= fixed + 3 and ARGV[nargs - 2] == 'endpoints' then
  disable_after, disable_min = tonumber(ARGV[nargs - 1]), tonumber(ARGV[nargs])
  nargs = nargs - 3
end
if #KEYS ~= 3 or not fixed or not disable_after or not disable_min or not (nargs == fixed or
    (nargs >= fixed + 2 and nargs == fixed + 2 + 4 * (tonumber(ARGV[fixed + 2]) or -1))) then
  return redis.error_reply('ERR event_settle: wants 3 keys and 15 + 2h + 2a + 11n + 6k (+ 2 + 4e) (+ 3) arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
-- the entries the dispatcher read (nil: none sent)
local given_from = nargs > fixed and ARGV[fixed + 1] or nil
local ngiven = given_from and tonumber(ARGV[fixed + 2]) or 0
local p, now = ARGV[1], tonumber(ARGV[2])
local cap, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local nhosts, naccts = tonumber(ARGV[9]), tonumber(ARGV[12])
local first_outcome = 16 + 2 * nhosts + 2 * naccts
local first_done = first_outcome + 11 * tonumber(ARGV[10])
local recorded = {} -- the members of events of their own hash whose outcome counted
local nrecorded = 0 -- outcomes that counted

-- A lease is only its entry in the lease set (KEYS[2]: member -> when it runs out, ms):
-- leasing writes nothing into the event, and the token of a lease is its end, the score
-- it was given. An event of its own hash is a member by its id, and its outcome counts
-- when its id has its token's score (the members of each token, one lease call's, read
-- once per call). The stream events one call leases are one member, their batch
-- '@<first entry>/<last entry>' (every entry between them was consumed by that call:
-- leased, or given a hash), with p lb: batch -> how many of its leases are not settled;
-- the dispatcher sends the batch as their token, and the outcome of one counts while its
-- batch is in the lease set (a batch's name is never made again: its entries are consumed
-- once) and this call took no outcome of that entry yet (one outcome per lease, even if a
-- call carried it twice). A batch goes when its count reaches 0, or when it runs out:
-- then each of its entries with neither a hash nor a done record is due again. Events
-- leased by a version before this one say `state` delivering and their `token` in their
-- hash (docs/event-layout.md); their leases run out here like any other.
local held = {}
local function holds(token, id)
  local t = held[token]
  if not t then
    t = {}
    if tonumber(token) then
      for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], token, token)) do t[m] = true end
    end
    held[token] = t
  end
  return t[id]
end
-- the batch `batch` holds stream entry `sid` unless its outcome was taken by this call
local alive, settled_sids = {}, {}
local batch_left = {} -- batch -> leases of it settled by this call
local function batch_holds(batch, sid)
  if settled_sids[sid] then return false end
  local a = alive[batch]
  if a == nil then
    a = string.sub(batch, 1, 1) == '@' and redis.call('ZSCORE', KEYS[2], batch) ~= false
    alive[batch] = a
  end
  if not a then return false end
  settled_sids[sid] = true
  batch_left[batch] = (batch_left[batch] or 0) + 1
  return true
end

-- An outcome brings what its lease gave (the attempt's number, the order key, the queue,
-- the stream entry), so recording it reads nothing of the event. The event's attempts are
-- counted when an attempt's outcome (or the end of its lease) is recorded. The attempt log:
-- the latest attempt in the event's field `attempt`, the ones before it in the list
-- log:<id> (the oldest dropped beyond the cap); the first attempt has none before it.
-- A stream event delivered at its first attempt is one field of p done:<day>, written for
-- the whole call at once; any other outcome of a stream event gives it a hash first (spill)
-- and is then recorded as for any hashed event.
local done_later, done_orders = {}, {}
-- the day of the last one: [from, to) ms, as text of as many digits as its ids' ms (so
-- that comparing the texts compares the numbers, without parsing one per event)
local day_from, day_to, day_key = '', '', nil
-- a stream event delivered at its first attempt: its record in p done:<day> (written for
-- the whole call below), its order to free
local function done_add(sid, id, order, record)
  local ms = sid_ms(sid)
  if #ms ~= #day_from or #ms ~= #day_to or ms < day_from or ms >= day_to then
    local day = math.floor(tonumber(ms) / DAY_MS)
    day_from, day_to = string.format('%.0f', day * DAY_MS), string.format('%.0f', (day + 1) * DAY_MS)
    day_key = p .. 'done:' .. day
  end
  local dk = day_key
  local l = done_later[dk]
  if not l then
    l = {}
    done_later[dk] = l
  end
  l[#l + 1] = id
  l[#l + 1] = record
  done_orders[#done_orders + 1] = order
  done_orders[#done_orders + 1] = id
end
-- The outcomes of deliveries to endpoints (their queue names the endpoint), in order, per
-- endpoint: its failures in a row, its counters, and whether it is to be disabled
-- (endpoint_outcomes below).
local ep_done, ep_order = {}, {}
local function ep_outcome(q, outcome, status, err)
  local _, _, host = string.match(q, '^([^:]*):([^:]*):(.*)$')
  local ep = host and ep_of_host(host)
  if not ep then return end
  local l = ep_done[ep]
  if not l then
    l = {q = q}
    ep_done[ep] = l
    ep_order[#ep_order + 1] = ep
  end
  l[#l + 1] = {outcome, status, err}
end
-- The deliveries dead after their last attempt in this call, each told with
-- EVENT:OPERATIONAL_DELIVERY_DEAD (lib/operational.lua) once the outcomes are recorded;
-- never one of an operational event (its lane is <endpoint id>:op:<account>): no event is
-- ever about the delivery of an operational one, so none can make another.
local deads = nil
due_batch()
for i = 0, tonumber(ARGV[10]) - 1 do
  local a = first_outcome + 11 * i
  local id, outcome, sid = ARGV[a], ARGV[a + 2], ARGV[a + 10]
  local ok
  if sid ~= '' then
    ok = batch_holds(ARGV[a + 1], sid)
  elseif holds(ARGV[a + 1], id) then
    -- one outcome per lease, even if a call carried it twice
    held[ARGV[a + 1]][id] = nil
    recorded[#recorded + 1] = id
    ok = true
  end
  if ok then
    local ek = p .. 'e:' .. id
    local attempts, order, q = ARGV[a + 7], ARGV[a + 8], ARGV[a + 9]
    nrecorded = nrecorded + 1
    ov_add(q, outcome)
    if sid == '' and outcome ~= 'release' and string.find(id, '/', 1, true) then
      ep_outcome(q, outcome, ARGV[a + 4], ARGV[a + 5])
    end
    local f = true
    if sid ~= '' and outcome == 'delivered' then
      done_add(sid, id, order, ARGV[2] .. '\t' .. attempts .. '\t' .. ARGV[a + 4] .. '\t' ..
        ARGV[a + 6] .. '\t' .. ARGV[a + 5])
      f = false
    elseif sid ~= '' then
      f = stream_entry(p, sid)
      if f then
        spill(p, sid, f, {})
      else
        -- an entry gone while leased (trimmed by hand, or lost by a Redis that failed
        -- over before it had it): nothing left to record, but its charge goes on
        order_release(p, order, id, now)
      end
    end
    if f and outcome == 'release' then
      -- the destination was busy: no attempt, the last result stays
      redis.call('HSET', ek, 'updated_ms', now, 'next_ms', ARGV[a + 3])
      due_add(p, q, id, ARGV[a + 3])
    elseif f then
      local lk = p .. 'log:' .. id
      local logged = false
      if tonumber(attempts) > 1 then
        local prev = redis.call('HGET', ek, 'attempt')
        if prev and prev ~= '' then
          logged = true
          if cap <= 1 then
            redis.call('DEL', lk)
          elseif redis.call('RPUSH', lk, prev) >= cap then
            redis.call('LTRIM', lk, 1 - cap, -1)
          end
        end
      end
      if outcome == 'retry' then
        redis.call('HSET', ek, 'updated_ms', now, 'next_ms', ARGV[a + 3], 'attempts', attempts,
          'last_status', ARGV[a + 4], 'last_error', ARGV[a + 5], 'attempt', ARGV[a + 6])
        due_add(p, q, id, ARGV[a + 3])
      else
        if outcome == 'delivered' then
          redis.call('HSET', ek, 'state', 'delivered', 'updated_ms', now, 'delivered_ms', now,
            'attempts', attempts, 'last_status', ARGV[a + 4], 'last_error', ARGV[a + 5],
            'attempt', ARGV[a + 6])
        else
          redis.call('HSET', ek, 'state', 'dead', 'updated_ms', now, 'dead_ms', now,
            'attempts', attempts, 'last_status', ARGV[a + 4], 'last_error', ARGV[a + 5],
            'attempt', ARGV[a + 6])
          redis.call('ZADD', KEYS[3], now, id)
          redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ttl * 1000)
          if not string.find(order, '^wep_[^:]*:op:') then
            deads = deads or {}
            deads[#deads + 1] = {id, q, attempts, ARGV[a + 4], ARGV[a + 5]}
          end
        end
        redis.call('EXPIRE', ek, ttl)
        if logged then redis.call('EXPIRE', lk, ttl) end
        order_release(p, order, id, now)
      end
    end
  end
end
-- stream events delivered at their first attempt, as the dispatcher sends them
for i = 0, tonumber(ARGV[15]) - 1 do
  local a = first_done + 6 * i
  local sid, id = ARGV[a], ARGV[a + 2]
  if batch_holds(ARGV[a + 1], sid) then
    nrecorded = nrecorded + 1
    local q = ARGV[a + 5]
    ov_done[q] = (ov_done[q] or 0) + 1
    done_add(sid, id, ARGV[a + 3], ARGV[a + 4])
  end
end
-- the batches whose every lease is settled go
for b, k in pairs(batch_left) do
  if redis.call('HINCRBY', p .. 'lb', b, -k) <= 0 then
    recorded[#recorded + 1] = b
    redis.call('HDEL', p .. 'lb', b)
  end
end
if #recorded > 0 then redis.call('ZREM', KEYS[2], unpack(recorded)) end
-- the stream events delivered: their outcomes, one HSET per day; their orders free
for dk, l in pairs(done_later) do
  redis.call('HSET', dk, unpack(l))
  -- kept the retention after the end of its day, by Redis' clock as the entry ids are
  redis.call('EXPIREAT', dk, (tonumber(string.sub(dk, #p + 6)) + 1) * 86400 + ttl)
end
if #done_orders > 0 then
  local names = {}
  for j = 1, #done_orders, 2 do names[#names + 1] = done_orders[j] end
  -- without order lists in the shard (p nl), each order's p busy is its event
  local b = names
  if redis.call('EXISTS', p .. 'nl') == 1 then b = redis.call('HMGET', p .. 'busy', unpack(names)) end
  local free, seen = {}, {}
  for j = 1, #names do
    local order, id = names[j], done_orders[2 * j]
    if seen[order] then
      order_release(p, order, id, now)
    elseif b == names or b[j] == id then
      free[#free + 1] = order
    else
      order_release(p, order, id, now, b[j] or false)
    end
    seen[order] = true
  end
  if #free > 0 then redis.call('HDEL', p .. 'busy', unpack(free)) end
end

-- a lease that ran out: its attempt counts (its outcome is unknown), the event is due again
-- (a stream event gets a hash of its own, with that one attempt)
local LEASE_LOST = 'lease expired: the dispatcher holding it stopped or was too slow'
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)
local swept = 0 -- stream entries looked at: a call stops taking batches back past 1024
for _, id in ipairs(expired) do
  local batch = string.sub(id, 1, 1) == '@'
  if batch and swept >= 1024 then break end
  redis.call('ZREM', KEYS[2], id)
  if batch then
    -- a batch of stream events: those of its entries settled have a hash (an outcome other
    -- than delivered, or given one when consumed) or a done record
    redis.call('HDEL', p .. 'lb', id)
    local slash = string.find(id, '/', 1, true)
    for _, en in ipairs(redis.call('XRANGE', p .. 's', string.sub(id, 2, slash - 1),
        string.sub(id, slash + 1))) do
      local sid, f = en[1], en[2]
      local _, _, eid = entry_meta(f[2])
      swept = swept + 1
      if redis.call('EXISTS', p .. 'e:' .. eid) == 0 and
          redis.call('HEXISTS', done_day_key(p, sid), eid) == 0 then
        local _, q = spill(p, sid, f, {'attempts', '1', 'last_error', LEASE_LOST})
        due_add(p, q, eid, now)
      end
    end
  elseif string.find(id, '-', 1, true) then
    -- a stream event leased alone (a build of layout 3 before batches)
    local f = stream_entry(p, id)
    if f then
      local eid, q = spill(p, id, f, {'attempts', '1', 'last_error', LEASE_LOST})
      due_add(p, q, eid, now)
    end
  else
    local ek = p .. 'e:' .. id
    local e = redis.call('HMGET', ek, 'queue', 'state')
    -- a settled event left in the lease set (only by hand) is not sent again
    if e[1] and e[2] ~= 'delivered' and e[2] ~= 'dead' then
      if e[2] == 'delivering' then
        -- leased by a version before this one: its attempt was counted at the lease
        redis.call('HSET', ek, 'state', 'pending', 'token', '', 'last_error', LEASE_LOST)
      else
        redis.call('HINCRBY', ek, 'attempts', 1)
        redis.call('HSET', ek, 'last_error', LEASE_LOST)
      end
      due_add(p, e[1], id, now)
    end
  end
end
due_flush(p)

-- the deliveries dead: to the account's endpoints that take operational events, with what
-- the event was (its type, read from its hash or, for a delivery to an endpoint of a stream
-- event, its entry) and where it went (the endpoint, or the postbackUrl)
for _, d in ipairs(deads or {}) do
  local id, q = d[1], d[2]
  local env, account, host = string.match(q, '^([^:]*):([^:]*):(.*)$')
  -- (an account without endpoints has no operational event: nothing is read for it)
  if env and account_info(p, env, account).fan then
    local O = op_lib()
    local slash = string.find(id, '/', 1, true)
    local evt = slash and string.sub(id, 1, slash - 1) or id
    local v = redis.call('HMGET', p .. 'e:' .. evt, 'type', 'url')
    local etype, url = v[1], v[2]
    local esid = not etype and slash and redis.call('HGET', p .. 'e:' .. id, 'esid') or ''
    if esid ~= '' then
      local f = stream_entry(p, esid)
      if f then
        local _, _, _, _, _, t, u = entry_meta(f[2])
        etype, url = t, u
      end
    end
    local ep = ep_of_host(host)
    if ep then url = redis.call('HGET', p .. 'ep:' .. ep, 'url') end
    O.write(p, env, account, 'EVENT:OPERATIONAL_DELIVERY_DEAD', id, '{"event":"' .. evt ..
      '","type":' .. O.str(etype) .. ',"endpoint":' .. O.str(ep) .. ',"url":' .. O.str(url) ..
      ',"attempts":' .. (tonumber(d[3]) or 0) .. ',"lastStatus":' ..
      (tonumber(d[4]) or 'null') .. ',"lastError":' .. O.str(d[5]) .. ',"deadAt":' ..
      O.time(now) .. '}', now, ttl)
  end
end

-- endpoint_outcomes: each endpoint with outcomes in this call: an attempt delivered ends its
-- failures in a row; one failed (a retry, or dead) adds to them. An endpoint enabled whose
-- every attempt failed for disable_after and at least disable_min in a row, or that answered
-- 410 Gone, is disabled (held: its deliveries and the events it takes are kept, not
-- attempted, until it is enabled again: endpoint_hold). One HMGET and one HSET an endpoint.
for _, ep in ipairs(ep_order) do
  local l = ep_done[ep]
  local k = p .. 'ep:' .. ep
  local r = redis.call('HMGET', k, 'state', 'fails', 'failing_ms', 'n_delivered', 'n_failed',
    'n_dead', 'env', 'account')
  if r[1] and r[1] ~= '' then
    local fails, since = tonumber(r[2]) or 0, tonumber(r[3] or '')
    local nd, nf, ndead = tonumber(r[4]) or 0, tonumber(r[5]) or 0, tonumber(r[6]) or 0
    local gone, last = false, nil
    for _, o in ipairs(l) do
      if o[1] == 'delivered' then
        fails, since, nd = 0, nil, nd + 1
      else
        fails, nf = fails + 1, nf + 1
        since = since or now
        if o[1] == 'dead' then ndead = ndead + 1 end
        if o[2] == '410' then gone = true end
      end
      last = o
    end
    redis.call('HSET', k, 'fails', fails, 'failing_ms', since or '', 'n_delivered', nd,
      'n_failed', nf, 'n_dead', ndead, 'last_ms', now, 'last_status', last[2],
      'last_error', last[3])
    if r[1] == 'on' and gone then
      endpoint_hold(p, ep, r[7], r[8], 'held', 'the endpoint answered 410 Gone', now, ttl)
    elseif r[1] == 'on' and fails >= disable_min and since and now - since >= disable_after then
      endpoint_hold(p, ep, r[7], r[8], 'held', 'every attempt failed for ' ..
        math.floor((now - since) / 1000) .. ' s (' .. fails .. ' in a row, the last: ' ..
        (last[3] ~= '' and last[3] or ('HTTP ' .. last[2])) .. ')', now, ttl)
    end
  end
end

-- the overview's counters: this call's outcomes, per minute and hour (lib/overview.lua)
ov_flush(p, now)

local out = {nrecorded, ''}
local left = tonumber(ARGV[4])
-- the cursor after this call, last in the answer when the dispatcher reads entries
local function answer(o)
  if given_from then o[#o + 1] = redis.call('HGET', p .. 'cur', 'id') or '' end
  return o
end
if left <= 0 then return answer(out) end
-- what each host, account and environment may still be given: a slow destination or a
-- busy tenant takes no more than its share of this process's capacity
local budget, per_account = {}, {}
for i = 0, nhosts - 1 do
  budget[ARGV[16 + 2 * i]] = tonumber(ARGV[17 + 2 * i])
end
for i = 0, naccts - 1 do
  per_account[ARGV[16 + 2 * nhosts + 2 * i]] = tonumber(ARGV[17 + 2 * nhosts + 2 * i])
end
local default, account_default = tonumber(ARGV[8]), tonumber(ARGV[11])
local per_env = {sandbox = tonumber(ARGV[13]), production = tonumber(ARGV[14])}
local function want_of(env, account, host)
  local w = budget[host] or default
  local aw = per_account[account] or account_default
  if aw < w then w = aw end
  if (per_env[env] or 0) < w then w = per_env[env] or 0 end
  if w > left then w = left end
  return w
end
local function took(env, account, host, n)
  budget[host] = (budget[host] or default) - n
  per_account[account] = (per_account[account] or account_default) - n
  per_env[env] = (per_env[env] or 0) - n
  left = left - n
end
local function queue_parts(q)
  local c1 = string.find(q, ':', 1, true)
  local c2 = c1 and string.find(q, ':', c1 + 1, true)
  if not c2 then return '', '', q end
  return string.sub(q, 1, c1 - 1), string.sub(q, c1 + 1, c2 - 1), string.sub(q, c2 + 1)
end
local accounts = {}
local function secrets(env, account)
  local ak = p .. 'acct:' .. env .. ':' .. account
  local s = accounts[ak]
  if not s then
    local v = redis.call('HMGET', ak, 'signing_secret', 'signing_secret_prev', 'webhook_secret')
    s = (v[1] or '') .. '\n' .. (v[2] or '') .. '\n' .. (v[3] or '')
    accounts[ak] = s
  end
  return s
end
-- the lease's end as the dispatcher wrote it ([2] + [3]): no number printed per event
local until_ms = ARGV[5]
local leased = {}
-- queue_next: queue `q` (its due set `dk`) is in p hosts from its earliest due event, or not
-- at all when it has none
local function queue_next(q, dk)
  local first = redis.call('ZRANGE', dk, 0, 0, 'WITHSCORES')
  if first[2] then
    redis.call('ZADD', KEYS[1], first[2], q)
  else
    redis.call('ZREM', KEYS[1], q)
  end
end

-- Deliveries to webhook endpoints (lib/endpoint.lua): what each needs besides its own hash,
-- read once a call: the endpoint (its URL, secrets, static headers, state), and the body of
-- its event (the event's stream entry, else its hash).
local endpoints, bodies = {}, {}
local function endpoint_of(ep)
  local e = endpoints[ep]
  if e == nil then
    local v = redis.call('HMGET', p .. 'ep:' .. ep, 'state', 'url', 'secret', 'secret_prev',
      'prev_until', 'headers', 'enabled_ms')
    e = false
    if v[1] then
      local prev = v[4] or ''
      if prev ~= '' and (tonumber(v[5]) or 0) <= now then prev = '' end
      e = {state = v[1], url = v[2] or '', enabled_ms = tonumber(v[7] or ''),
        -- signing secret, the previous one during a rotation's grace, no compat secret, and
        -- the static headers ("Name: value" lines): lease.h
        secrets = (v[3] or '') .. '\n' .. prev .. '\n' .. '\n' .. (v[6] or '')}
    end
    endpoints[ep] = e
  end
  return e
end
local function body_of(evt, esid)
  local b = bodies[evt]
  if b == nil then
    b = false
    if esid and esid ~= '' then
      local f = stream_entry(p, esid)
      if f then b = f[4] end
    end
    if not b then b = redis.call('HGET', p .. 'e:' .. evt, 'body') or false end
    bodies[evt] = b
  end
  return b
end
local GONE_ENDPOINT = 'the webhook endpoint was deleted'
local GONE_EVENT = 'the event is gone (kept event-retention-days)'
-- lease_endpoint: the due deliveries of endpoint `ep`'s queue `q`, as much as it may take.
-- An endpoint disabled keeps its queue out of p hosts (p held); one deleted has its due
-- deliveries dead (a call takes what its budget allows, the next the rest).
local function lease_endpoint(q, env, account, ep)
  local e = endpoint_of(ep)
  local dk = p .. 'due:' .. q
  if e and e.state ~= 'on' then
    redis.call('ZREM', KEYS[1], q)
    redis.call('ZADD', p .. 'held', 'NX', now, q)
    return
  end
  local want = want_of(env, account, ep)
  if want <= 0 then return end
  local ids = redis.call('ZRANGEBYSCORE', dk, '-inf', now, 'LIMIT', 0, want)
  local got = 0
  for _, did in ipairs(ids) do
    local ek = p .. 'e:' .. did
    local d = redis.call('HMGET', ek, 'esid', 'created_ms', 'budget_base', 'budget_ms',
      'attempts', 'order')
    if d[2] then
      local evt = string.sub(did, 1, (string.find(did, '/', 1, true) or 1) - 1)
      local body = e and body_of(evt, d[1])
      if not e then
        delivery_dead(p, did, d[6] or '', now, ttl, GONE_ENDPOINT)
      elseif not body then
        delivery_dead(p, did, d[6] or '', now, ttl, GONE_EVENT)
      else
        local attempts = tonumber(d[5]) or 0
        local base, start = d[3] or '0', d[4] or d[2]
        -- made before its endpoint was enabled again: a fresh budget from then
        if e.enabled_ms and e.enabled_ms > (tonumber(start) or 0) then
          base, start = tostring(attempts), tostring(e.enabled_ms)
          redis.call('HSET', ek, 'budget_base', base, 'budget_ms', start)
        end
        leased[#leased + 1] = until_ms
        leased[#leased + 1] = did
        local n = #out
        out[n + 1], out[n + 3] = '', body
        out[n + 2] = (d[6] or '') .. '\n' .. q .. '\n' .. did .. '\n' .. env .. '\n' ..
          account .. '\n\n' .. e.url
        out[n + 4] = (attempts + 1) .. '\t' .. base .. '\t' .. start
        out[n + 5] = e.secrets
        got = got + 1
      end
    end
  end
  took(env, account, ep, got)
  -- by name: a delivery dead above may have put the next of its lane in the due set
  if #ids > 0 then redis.call('ZREM', dk, unpack(ids)) end
  queue_next(q, dk)
end

-- 1. the due sets: queues at their limit are passed over without a command; at most 1000
-- looked at per call
local queues = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1000)
for _, q in ipairs(queues) do
  if left <= 0 then break end
  local env, account, host = queue_parts(q)
  local ep = ep_of_host(host)
  if ep then
    lease_endpoint(q, env, account, ep)
  else
  local want = want_of(env, account, host)
  if want > 0 then
    local dk = p .. 'due:' .. q
    local ids = redis.call('ZRANGEBYSCORE', dk, '-inf', now, 'LIMIT', 0, want)
    local got = 0
    for _, id in ipairs(ids) do
      local ek = p .. 'e:' .. id
      local e = redis.call('HMGET', ek, 'url', 'body', 'budget_base', 'created_ms', 'account',
        'env', 'budget_ms', 'attempts', 'order', 'type')
      if e[1] then
        -- after a replay, the age limit counts from the replay
        if e[7] and e[7] ~= '' then e[4] = e[7] end
        local attempts = (tonumber(e[8]) or 0) + 1
        leased[#leased + 1] = until_ms
        leased[#leased + 1] = id
        local n = #out
        out[n + 1], out[n + 3] = '', e[2]
        out[n + 2] = (e[9] or '') .. '\n' .. q .. '\n' .. id .. '\n' .. e[6] .. '\n' .. e[5] ..
          '\n' .. (e[10] or '') .. '\n' .. e[1]
        out[n + 4] = attempts .. '\t' .. (e[3] or '0') .. '\t' .. (e[4] or '')
        out[n + 5] = secrets(e[6], e[5])
        got = got + 1
      end
    end
    took(env, account, host, got)
    -- (an id whose hash is gone still counted against its account and environment before)
    if #ids > 0 then redis.call('ZREMRANGEBYRANK', dk, 0, #ids - 1) end
    queue_next(q, dk)
  end
  end
end

-- 2. the stream, from the cursor: first attempts in arrival order. An entry whose charge
-- has an earlier event not settled waits behind it (spill into the order's list). An entry
-- over its host's, account's or environment's budget stops the reading, unless another
-- queue with entries in the stream could go now: then it waits in its due set (spill), and
-- the reading goes on. At most SPILL_MAX spills of either kind a call: past them the
-- reading stops, and the next call goes on from there (work per call stays bounded however
-- many events one charge was sent at once).
local SPILL_MAX = 256
if left > 0 and redis.call('EXISTS', p .. 'qn') == 1 then
  local sk = p .. 's'
  local cur = redis.call('HGET', p .. 'cur', 'id')
  local from = '-'
  if cur then from = '(' .. cur end
  local last, consumed, spilled, stop = nil, 0, 0, false
  local batch_first, batch_last, batch_n = nil, nil, 0
  local qdone = {}  -- queue -> entries consumed by this call
  local bstate = {} -- order -> false (none unsettled) | 'v2' (a list of version 2) | id | '+'
  local bset, bnames = {}, {}
  local function busy_set(order, v)
    if bset[order] == nil then bnames[#bnames + 1] = order end
    bset[order] = v
    bstate[order] = v
  end
  local can_go, waiting, qparts = {}, nil, {}
  -- lists of layout 2 may exist until p v3 says none can (lib/event.lua): it is set once
  -- no event could head one (none due, none leased but stream entries), so a shard of a
  -- Redis written by the version before is checked whatever process reads it first
  local v2 = redis.call('EXISTS', p .. 'v3') == 0
  if v2 and redis.call('ZCARD', KEYS[1]) == 0 and #leased == 0 and
      redis.call('ZCARD', KEYS[2]) <= 1000 then
    local hashed = false
    for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
      if not string.find(m, '-', 1, true) then
        hashed = true
        break
      end
    end
    if not hashed then
      redis.call('SET', p .. 'v3', '1')
      redis.call('DEL', p .. 'v2') -- the mark an earlier build of layout 3 set instead
      v2 = false
    end
  end
  local function others_can_go(q)
    local c = can_go[q]
    if c ~= nil then return c end
    if not waiting then waiting = redis.call('HGETALL', p .. 'qn') end
    c = false
    for j = 1, #waiting, 2 do
      local q2 = waiting[j]
      if q2 ~= q and (tonumber(waiting[j + 1]) or 0) - (qdone[q2] or 0) > 0 then
        local env2, account2, host2 = queue_parts(q2)
        if want_of(env2, account2, host2) > 0 then
          c = true
          break
        end
      end
    end
    can_go[q] = c
    return c
  end
  -- the dispatcher's entries first, when they start at or before the cursor
  -- ('' = the stream's start, at or before any cursor)
  local given = ngiven > 0 and (given_from == '' or given_from == cur or
    (cur and sid_at_or_before(given_from, cur)))
  if given then
    -- and this Redis holds them: the last one given is here, the same event
    -- (a replica promoted may lack what its primary had, and entries are replicated in
    -- order, so the last one present means all before it are). One entry read a call.
    local last_given = fixed + 3 + 4 * (ngiven - 1)
    if not cur or not sid_at_or_before(ARGV[last_given], cur) then
      local here = redis.call('XRANGE', sk, ARGV[last_given], ARGV[last_given])
      local hid = false
      if here[1] then
        local _, _, i = entry_meta(here[1][2][2])
        hid = i
      end
      given = hid == ARGV[last_given + 3]
    end
  end
  while left > 0 and not stop do
    -- a window of entries: their ids, the heads of their metas (order key, queue, id) and
    -- their fields (nil for an entry given: read only if it must be spilled)
    local sids, ords, qs, ids, fs = {}, {}, {}, {}, {}
    local more
    if given then
      given = false
      local base = fixed + 3
      -- the entries come in the stream's order (the dispatcher's XRANGE): once one is
      -- after the cursor, so are the rest, and no more ids are parsed to compare (two
      -- tonumber an entry were a twentieth of a delivery's work: docs/performance.md)
      local past = not cur
      for i = 0, ngiven - 1 do
        local a = base + 4 * i
        if not past then past = not sid_at_or_before(ARGV[a], cur) end
        if past then
          local j = #sids + 1
          sids[j], ords[j], qs[j], ids[j] = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
        end
      end
      -- (the stream may hold more after them: read on from the last)
      more = true
    else
      -- exactly what is still wanted: an entry read and not taken is read again later
      local w = left
      if w > 128 then w = 128 end
      local entries = redis.call('XRANGE', sk, from, '+', 'COUNT', w)
      for j, en in ipairs(entries) do
        -- the head of the entry's meta: order key, queue, id
        local m = en[2][2]
        local n1 = string.find(m, '\n', 1, true)
        local n2 = string.find(m, '\n', n1 + 1, true)
        local n3 = string.find(m, '\n', n2 + 1, true)
        sids[j], fs[j] = en[1], en[2]
        ords[j], qs[j], ids[j] = string.sub(m, 1, n1 - 1), string.sub(m, n1 + 1, n2 - 1),
          string.sub(m, n2 + 1, n3 - 1)
      end
      more = #entries >= w
      if #entries == 0 then break end
    end
    -- the orders of the window: p busy, and the lists of version 2 for those not in it
    local ask, asked = {}, {}
    for j = 1, #sids do
      local o = ords[j]
      if bstate[o] == nil and not asked[o] then
        asked[o] = true
        ask[#ask + 1] = o
      end
    end
    if #ask > 0 then
      local v = redis.call('HMGET', p .. 'busy', unpack(ask))
      local free, lists = {}, {}
      for j, o in ipairs(ask) do
        if v[j] then
          bstate[o] = v[j]
        else
          bstate[o] = false
          if v2 then
            free[#free + 1] = o
            lists[#lists + 1] = p .. 'o:' .. o
          end
        end
      end
      if #lists > 0 and v2 and redis.call('EXISTS', unpack(lists)) > 0 then
        for j, o in ipairs(free) do
          if redis.call('EXISTS', lists[j]) == 1 then bstate[o] = 'v2' end
        end
      end
    end
    for j = 1, #sids do
      local sid, order, q, id = sids[j], ords[j], qs[j], ids[j]
      local parts = qparts[q]
      if not parts then
        parts = {queue_parts(q)}
        qparts[q] = parts
      end
      local env, account, host = parts[1], parts[2], parts[3]
      local b = bstate[order]
      if b == false and want_of(env, account, host) > 0 then
        -- (the account's secrets kept with the queue's parts: no key named per event)
        local sec = parts[4] or secrets(env, account)
        parts[4] = sec
        busy_set(order, id)
        if not batch_first then batch_first = sid end
        batch_last = sid
        batch_n = batch_n + 1
        local n = #out
        local f = fs[j]
        out[n + 1], out[n + 2], out[n + 3] = sid, f and f[2] or '', f and f[4] or ''
        out[n + 4], out[n + 5] = '', sec
        took(env, account, host, 1)
      elseif spilled < SPILL_MAX and (b or others_can_go(q)) then
        local f = fs[j] or stream_entry(p, sid)
        if not f then
          -- not in this Redis (removed by hand): the reading stops before it
          stop = true
          break
        end
        if b then
          -- behind an earlier event of its charge
          spill(p, sid, f, {})
          local ok = p .. 'o:' .. order
          if b == '+' then
            redis.call('RPUSH', ok, id)
          else
            if b == 'v2' then
              redis.call('RPUSH', ok, id)
            else
              redis.call('RPUSH', ok, b, id)
            end
            busy_set(order, '+')
            redis.call('INCR', p .. 'nl')
          end
          spilled = spilled + 1
        else
          spill(p, sid, f, {})
          busy_set(order, id)
          due_add(p, q, id, now)
          spilled = spilled + 1
        end
      else
        stop = true
        break
      end
      consumed = consumed + 1
      qdone[q] = (qdone[q] or 0) + 1
      last = sid
      if left <= 0 then break end
    end
    if last then from = '(' .. last end
    if not more then break end
  end
  if #bnames > 0 then
    local args = {'', BUSY_TABLE}
    for _, o in ipairs(bnames) do
      args[#args + 1] = o
      args[#args + 1] = bset[o]
    end
    redis.call('HSET', p .. 'busy', unpack(args))
  end
  if batch_n > 0 then
    local b = '@' .. batch_first .. '/' .. batch_last
    leased[#leased + 1] = until_ms
    leased[#leased + 1] = b
    redis.call('HSET', p .. 'lb', b, batch_n)
  end
  if consumed > 0 then
    redis.call('HSET', p .. 'cur', 'id', last)
    redis.call('HINCRBY', p .. 'cur', 'n', consumed)
    for q, k in pairs(qdone) do qn_add(p, q, -k) end
  end
end

if #leased > 0 then redis.call('ZADD', KEYS[2], unpack(leased)) end
if #out == 2 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if first[2] then out[2] = first[2] end
end
return answer(out)
