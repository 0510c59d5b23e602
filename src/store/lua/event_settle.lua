-- event_settle: record the outcomes of delivery attempts and lease the next due events of
-- one shard, in one call: a dispatcher at saturation spends one round trip on many
-- deliveries, and leases exactly what each destination host can take.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:lease
-- KEYS[3] = <prefix>{s<k>}:dead
-- ARGV[1] = shard key prefix, [2] = now (ms), [3] = lease (ms), [4] = how many to lease at
--   most, [5] = token of this lease (its end, [2] + [3]: the score its events get in the
--   lease set; not read), [6] = attempt log cap, [7] = retention (seconds), [8] = how many
--   events of one host to lease at most, unless listed, [9] = number h of hosts listed,
--   [10] = number n of outcomes, [11] = how many events of one account to lease at most,
--   unless listed, [12] = number a of accounts listed, [13] = how many sandbox events to
--   lease at most, [14] = how many production events, then h pairs (host, how many of its
--   events to lease at most), a pairs (account, how many of its events), then n times 10:
--   event id, token of its lease (its end), outcome (delivered | retry | dead | release),
--   next attempt (ms), HTTP status ('' = none), error text, attempt log entry (JSON), and
--   what its lease answered: the attempt's number, the order key, the queue
-- An outcome counts only from the holder of the lease (a late answer after the lease ran
-- out, and another process leased the event, is ignored). A delivered or dead event and its
-- log expire after the retention; the dead set forgets what is older. A lease that ran out
-- (its dispatcher died or stalled) makes the event due again.
-- Returns {outcomes recorded, when the next event is due ('' = none) when nothing was
--   leased, then for each leased event: id, url, body, attempts, budget_base, budget start
--   (created_ms, or the last replay), account, env, signing secret, previous signing
--   secret, compat secret, order key, queue}
--@include event
if #KEYS ~= 3 or #ARGV < 14 or
    #ARGV ~= 14 + 2 * tonumber(ARGV[9]) + 2 * tonumber(ARGV[12]) + 10 * tonumber(ARGV[10]) then
  return redis.error_reply('ERR event_settle: wants 3 keys and 14 + 2h + 2a + 10n arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now = ARGV[1], tonumber(ARGV[2])
local cap, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local nhosts, naccts = tonumber(ARGV[9]), tonumber(ARGV[12])
local first_outcome = 15 + 2 * nhosts + 2 * naccts
local recorded = {}

-- the next event of a settled event's order key may go now. The settled one is the head
-- of its order list: one LPOP of two takes it and shows the next, put back if there is
-- one; an event alone in its list costs that one command.
local function next_of(order, id)
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
    if due < now then due = now end
    if n[2] then due_add(p, n[2], nxt, due) end
  end
end

-- A lease is only its entry in the lease set (KEYS[2]: event id -> when it runs out, ms):
-- leasing writes nothing into the event, and the token of a lease is its end, the score
-- it was given. An outcome counts when its event has its token's score: the events of
-- each token (one lease call's) are read once per call. Events leased by a version
-- before this one say `state` delivering and their `token` in their hash
-- (docs/event-layout.md); their leases run out here like any other.
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

-- An outcome brings what its lease gave (the attempt's number, the order key, the queue),
-- so recording it reads nothing of the event. The event's attempts are counted when an
-- attempt's outcome (or the end of its lease) is recorded. The attempt log: the latest
-- attempt in the event's field `attempt`, the ones before it in the list log:<id> (the
-- oldest dropped beyond the cap); the first attempt has none before it to move.
due_batch()
for i = 0, tonumber(ARGV[10]) - 1 do
  local a = first_outcome + 10 * i
  local id, outcome = ARGV[a], ARGV[a + 2]
  if holds(ARGV[a + 1], id) then
    -- one outcome per lease, even if a call carried it twice
    held[ARGV[a + 1]][id] = nil
    local ek = p .. 'e:' .. id
    local attempts, order, q = ARGV[a + 7], ARGV[a + 8], ARGV[a + 9]
    recorded[#recorded + 1] = id
    if outcome == 'release' then
      -- the destination was busy: no attempt, the last result stays
      redis.call('HSET', ek, 'updated_ms', now, 'next_ms', ARGV[a + 3])
      due_add(p, q, id, ARGV[a + 3])
    else
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
        end
        redis.call('EXPIRE', ek, ttl)
        if logged then redis.call('EXPIRE', lk, ttl) end
        next_of(order, id)
      end
    end
  end
end
if #recorded > 0 then redis.call('ZREM', KEYS[2], unpack(recorded)) end

-- a lease that ran out: its attempt counts (its outcome is unknown), the event is due again
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(expired) do
  local ek = p .. 'e:' .. id
  redis.call('ZREM', KEYS[2], id)
  local e = redis.call('HMGET', ek, 'queue', 'state')
  -- a settled event left in the lease set (only by hand) is not sent again
  if e[1] and e[2] ~= 'delivered' and e[2] ~= 'dead' then
    if e[2] == 'delivering' then
      -- leased by a version before this one: its attempt was counted at the lease
      redis.call('HSET', ek, 'state', 'pending', 'token', '',
        'last_error', 'lease expired: the dispatcher holding it stopped or was too slow')
    else
      redis.call('HINCRBY', ek, 'attempts', 1)
      redis.call('HSET', ek,
        'last_error', 'lease expired: the dispatcher holding it stopped or was too slow')
    end
    due_add(p, e[1], id, now)
  end
end
due_flush(p)

local out = {#recorded, ''}
local left = tonumber(ARGV[4])
if left <= 0 then return out end
-- what each host, account and environment may still be given: a slow destination or a
-- busy tenant takes no more than its share of this process's capacity
local budget, per_account = {}, {}
for i = 0, nhosts - 1 do
  budget[ARGV[15 + 2 * i]] = tonumber(ARGV[16 + 2 * i])
end
for i = 0, naccts - 1 do
  per_account[ARGV[15 + 2 * nhosts + 2 * i]] = tonumber(ARGV[16 + 2 * nhosts + 2 * i])
end
local default, account_default = tonumber(ARGV[8]), tonumber(ARGV[11])
local per_env = {sandbox = tonumber(ARGV[13]), production = tonumber(ARGV[14])}
local accounts = {}
local until_ms = now + tonumber(ARGV[3])
local leased = {}
-- queues at their limit are passed over without a command; at most 1000 looked at per call
local queues = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1000)
for _, q in ipairs(queues) do
  if left <= 0 then break end
  local c1 = string.find(q, ':', 1, true)
  local c2 = c1 and string.find(q, ':', c1 + 1, true)
  local env, account, host = '', '', q
  if c2 then
    env, account, host = string.sub(q, 1, c1 - 1), string.sub(q, c1 + 1, c2 - 1),
      string.sub(q, c2 + 1)
  end
  local want = budget[host] or default
  local acct_left = per_account[account] or account_default
  if acct_left < want then want = acct_left end
  if (per_env[env] or 0) < want then want = per_env[env] or 0 end
  if want > left then want = left end
  if want > 0 then
    local dk = p .. 'due:' .. q
    local ids = redis.call('ZRANGEBYSCORE', dk, '-inf', now, 'LIMIT', 0, want)
    for _, id in ipairs(ids) do
      local ek = p .. 'e:' .. id
      local e = redis.call('HMGET', ek, 'url', 'body', 'budget_base', 'created_ms', 'account',
        'env', 'budget_ms', 'attempts', 'order')
      if e[1] then
        -- after a replay, the age limit counts from the replay
        if e[7] and e[7] ~= '' then e[4] = e[7] end
        local ak = p .. 'acct:' .. e[6] .. ':' .. e[5]
        local s = accounts[ak]
        if not s then
          s = redis.call('HMGET', ak, 'signing_secret', 'signing_secret_prev', 'webhook_secret')
          accounts[ak] = s
        end
        local attempts = tostring((tonumber(e[8]) or 0) + 1)
        leased[#leased + 1] = until_ms
        leased[#leased + 1] = id
        local n = #out
        out[n + 1], out[n + 2], out[n + 3], out[n + 4] = id, e[1], e[2], attempts
        out[n + 5], out[n + 6], out[n + 7], out[n + 8] = e[3] or '0', e[4], e[5], e[6]
        out[n + 9], out[n + 10], out[n + 11] = s[1] or '', s[2] or '', s[3] or ''
        out[n + 12], out[n + 13] = e[9] or '', q
        left = left - 1
      end
    end
    per_account[account] = acct_left - #ids
    per_env[env] = (per_env[env] or 0) - #ids
    if #ids > 0 then redis.call('ZREMRANGEBYRANK', dk, 0, #ids - 1) end
    local first = redis.call('ZRANGE', dk, 0, 0, 'WITHSCORES')
    if first[2] then
      redis.call('ZADD', KEYS[1], first[2], q)
    else
      redis.call('ZREM', KEYS[1], q)
    end
  end
end
if #leased > 0 then redis.call('ZADD', KEYS[2], unpack(leased)) end
if #out == 2 then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if first[2] then out[2] = first[2] end
end
return out
