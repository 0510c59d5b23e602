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

-- ep_lib: what event_write needs to fan an event out, as a table of functions made at the
-- first call of a script that needs them (an account with endpoints): a script that writes
-- events of accounts without any makes one function at each call, not four (Redis' Lua
-- makes every function a script defines at each call, each capturing what it uses: about
-- 1,000 instructions an event in ingest.lua, measured with tests/bench/redis_instructions.py).
--   takes(types, etype): whether an endpoint whose filter is `types` takes an event of
--     `etype` (the rule of pix/endpoint.c's endpoint_types_match)
--   parse(s): an account's field fanout as a list of {id, state, types}
--   queue(env, account, ep): the delivery queue of endpoint `ep`
--   write(p, evt, esid, ep, state, env, account, order, created, now): event `evt` (its
--     stream entry `esid`, '' = none; created at `created` ms) of `order` goes to endpoint
--     `ep` too: its delivery's hash, its turn in its lane and, when it is the lane's head,
--     its queue's due set (an endpoint held keeps its queue out of p hosts: nothing of it is
--     leased). Returns the delivery's id.
local endpoint_lib = nil
local function ep_lib()
  if endpoint_lib then return endpoint_lib end
  local L = {}
  local OPERATIONAL = 'EVENT:OPERATIONAL_'
  function L.takes(types, etype)
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
  function L.parse(s)
    local l = {}
    for line in string.gmatch(s, '[^\n]+') do
      local id, state, types = string.match(line, '^(%S+) (%S+) ?(.*)$')
      if id then l[#l + 1] = {id = id, state = state, types = types} end
    end
    return l
  end
  -- taking(fan, etype): of the endpoints `fan` (parse's), those that take `etype`, and
  -- their ids separated by spaces; nil, nil when none does
  function L.taking(fan, etype)
    local eps, ids
    for _, t in ipairs(fan) do
      if L.takes(t.types, etype) then
        eps = eps or {}
        ids = ids or {}
        eps[#eps + 1] = t
        ids[#ids + 1] = t.id
      end
    end
    return eps, ids and table.concat(ids, ' ')
  end
  function L.queue(env, account, ep)
    return env .. ':' .. account .. ':' .. ep
  end
  function L.write(p, evt, esid, ep, state, env, account, order, created, now)
    local did = evt .. '/' .. ep
    local q = L.queue(env, account, ep)
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
  endpoint_lib = L
  return L
end
