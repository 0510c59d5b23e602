-- Webhook endpoints (docs/event-layout.md, "Endpoints"): besides its postbackUrl, each
-- event of an account goes to every endpoint of the account whose filter takes its type,
-- each such delivery a small hash of its own that refers to the event, whose body stays
-- where it is (its stream entry, or its hash): stored once, whatever the destinations.
--   p ep:<endpoint id>     hash: the endpoint (store/endpoints.c): id, env, account, url,
--                          description, types (its filter, items separated by spaces, '' =
--                          every type but the operational ones), headers ("Name: value\n"
--                          lines), secret, secret_prev and prev_until (ms: the previous one
--                          signs until then), state (on | held: disabled by pixrelay, its
--                          events kept | off: disabled by request), disabled_ms, disabled_why,
--                          enabled_ms (when it was last enabled again: deliveries made before
--                          get a fresh retry budget), created_ms, updated_ms; fails (attempts
--                          failed in a row) and failing_ms (the first of them); and its
--                          counters: n_delivered, n_failed (attempts), n_dead, last_ms,
--                          last_status, last_error
--   p eps:<env>:<account>  zset: the account's endpoints by creation time
--   p acct:<env>:<account> its field fanout: one line per endpoint that takes events,
--                          "<endpoint id> <state> <types>" (state on or held), absent when
--                          there is none: the one value event_write reads of an account
--                          besides its postback_url, in the same HMGET, once per call
--   p held                 zset: the queue of each disabled endpoint -> when it was disabled
-- A delivery to an endpoint: p e:<event id>/<endpoint id> (its id, "did"), with fields
-- queue (<env>:<account>:<endpoint id>: an endpoint's deliveries are a queue of their own,
-- and its budget as a destination is the endpoint's, named by its id), order (its lane:
-- <endpoint id>:<order key>, so that per-charge order holds per destination), created_ms
-- (the event's), esid (the event's stream entry, '' when the event is a hash of its own)
-- and state; then, as attempts are recorded, what an event of layout 2 holds (attempts,
-- attempt, last_status, ..., event_settle.lua) and its log p log:<did>. The event says
-- where it went: its entry's field d, or its hash's field dests (endpoint ids separated
-- by spaces).

local OPERATIONAL = 'EVENT:OPERATIONAL_'

-- ep_takes: whether an endpoint whose filter is `types` takes an event of `etype` (the
-- rule of pix/endpoint.c's endpoint_types_match)
local function ep_takes(types, etype)
  local operational = string.sub(etype, 1, #OPERATIONAL) == OPERATIONAL
  if types == '' then return not operational end
  for item in string.gmatch(types, '%S+') do
    if string.sub(item, -1) == '*' then
      local pre = string.sub(item, 1, -2)
      if string.sub(etype, 1, #pre) == pre and (not operational or #pre >= #OPERATIONAL) then
        return true
      end
    elseif item == etype then
      return true
    end
  end
  return false
end

-- fanout_parse: an account's field fanout as a list of {id, state, types}
local function fanout_parse(s)
  local l = {}
  for line in string.gmatch(s, '[^\n]+') do
    local id, state, types = string.match(line, '^(%S+) (%S+) ?(.*)$')
    if id then l[#l + 1] = {id = id, state = state, types = types} end
  end
  return l
end

-- fanout_rebuild: write the field fanout of account `account` of `env` from its endpoints
local function fanout_rebuild(p, env, account)
  local lines = {}
  for _, id in ipairs(redis.call('ZRANGE', p .. 'eps:' .. env .. ':' .. account, 0, -1)) do
    local e = redis.call('HMGET', p .. 'ep:' .. id, 'state', 'types')
    if e[1] == 'on' or e[1] == 'held' then
      lines[#lines + 1] = id .. ' ' .. e[1] .. ' ' .. (e[2] or '')
    end
  end
  local ak = p .. 'acct:' .. env .. ':' .. account
  if #lines > 0 then
    redis.call('HSET', ak, 'fanout', table.concat(lines, '\n'))
  else
    redis.call('HDEL', ak, 'fanout')
  end
end

-- ep_queue: the delivery queue of endpoint `ep` of `account` in `env`
local function ep_queue(env, account, ep)
  return env .. ':' .. account .. ':' .. ep
end

-- an endpoint's queue names the endpoint where a postback's names its host
local function ep_of_host(host)
  if string.sub(host, 1, 4) == 'wep_' then return host end
  return nil
end

-- delivery_write: event `evt` (its stream entry `esid`, '' = none; created at `created`
-- ms) of `order` goes to endpoint `ep` too: its delivery's hash, its turn in its lane and,
-- when it is the lane's head, its queue's due set (an endpoint held keeps its queue out of
-- p hosts: nothing of it is leased). Returns the delivery's id.
local function delivery_write(p, evt, esid, ep, state, env, account, order, created, now)
  local did = evt .. '/' .. ep
  local q = ep_queue(env, account, ep)
  local lane = ep .. ':' .. order
  redis.call('HSET', p .. 'e:' .. did, 'queue', q, 'order', lane, 'created_ms', created,
    'state', 'pending', 'esid', esid)
  -- a lane is never a list of version 2: no EXISTS
  if order_claim(p, lane, did, nil, true) then
    if state == 'on' then
      due_add(p, q, did, now)
    else
      -- held: due since its creation (the retention counts from there, endpoint_expire)
      zadd(p .. 'due:' .. q, created, did)
    end
  end
  return did
end

-- delivery_dead: delivery `did` (lane `lane`) is dead without an attempt, for `why`; the
-- next of its lane goes
local function delivery_dead(p, did, lane, now, ttl, why)
  local ek = p .. 'e:' .. did
  redis.call('HSET', ek, 'state', 'dead', 'updated_ms', now, 'dead_ms', now, 'last_error', why)
  redis.call('ZADD', p .. 'dead', now, did)
  redis.call('EXPIRE', ek, ttl)
  order_release(p, lane, did, now)
end

-- endpoint_hold: endpoint `ep` (its record's env and account) is disabled, `state` held (by
-- pixrelay: the events its filter takes are still given to it, kept) or off (by request: no
-- new ones); its queue leaves p hosts (what it holds waits in its due set and lanes) for p
-- held. The one place an endpoint is disabled.
-- (Operational events, issue 30: "an endpoint disabled" is written from here.)
local function endpoint_hold(p, ep, env, account, state, why, now)
  local q = ep_queue(env, account, ep)
  redis.call('HSET', p .. 'ep:' .. ep, 'state', state, 'disabled_ms', now, 'disabled_why', why,
    'updated_ms', now)
  redis.call('ZREM', p .. 'hosts', q)
  redis.call('ZADD', p .. 'held', 'NX', now, q)
  fanout_rebuild(p, env, account)
end

-- endpoint_resume: endpoint `ep` is enabled again: its failures forgotten, its queue back
-- in p hosts from its earliest due delivery (those made before now get a fresh retry
-- budget when leased: enabled_ms). (Operational events: "an endpoint re-enabled".)
local function endpoint_resume(p, ep, env, account, now)
  local q = ep_queue(env, account, ep)
  redis.call('HSET', p .. 'ep:' .. ep, 'state', 'on', 'enabled_ms', now, 'fails', 0,
    'failing_ms', '', 'disabled_ms', '', 'disabled_why', '', 'updated_ms', now)
  redis.call('ZREM', p .. 'held', q)
  local first = redis.call('ZRANGE', p .. 'due:' .. q, 0, 0, 'WITHSCORES')
  if first[2] then redis.call('ZADD', p .. 'hosts', 'LT', first[2], q) end
  fanout_rebuild(p, env, account)
end
