-- What changes webhook endpoints needs beyond writing events (lib/endpoint.lua, which
-- lib/event.lua includes, says what they hold): the account's field fanout rebuilt,
-- endpoints disabled and enabled again, deliveries dead without an attempt. Kept apart
-- from lib/endpoint.lua so that the scripts that only write events (every charge's change,
-- ingest, a bank's Pix) do not define these functions at each call. Disabling and enabling
-- an endpoint write their operational events (lib/operational.lua).
--@include event
--@include operational

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
  -- what event_write remembered of the account in this call is stale now
  local ea = env .. '\n' .. account
  acct_known[p .. ea] = nil
  for _, by_url in pairs(dest_known) do by_url[ea] = nil end
end

-- an endpoint's queue names the endpoint where a postback's names its host
local function ep_of_host(host)
  if string.sub(host, 1, 4) == 'wep_' then return host end
  return nil
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
-- held. The one place an endpoint is disabled, and so the one that writes
-- EVENT:OPERATIONAL_ENDPOINT_DISABLED (kept `ttl` seconds), after the change: an endpoint
-- held that takes operational events keeps its own for when it is enabled again; one
-- disabled by request is given none.
local function endpoint_hold(p, ep, env, account, state, why, now, ttl)
  local q = ep_lib().queue(env, account, ep)
  local k = p .. 'ep:' .. ep
  redis.call('HSET', k, 'state', state, 'disabled_ms', now, 'disabled_why', why,
    'updated_ms', now)
  redis.call('ZREM', p .. 'hosts', q)
  redis.call('ZADD', p .. 'held', 'NX', now, q)
  fanout_rebuild(p, env, account)
  local O = op_lib()
  local r = redis.call('HMGET', k, 'url', 'fails', 'failing_ms', 'last_status', 'last_error')
  O.write(p, env, account, 'EVENT:OPERATIONAL_ENDPOINT_DISABLED', ep, '{"endpoint":"' .. ep ..
    '","url":' .. O.str(r[1]) .. ',"by":"' .. (state == 'held' and 'pixrelay' or 'request') ..
    '","reason":' .. O.str(why) .. ',"disabledAt":' .. O.time(now) .. ',"failuresInARow":' ..
    (tonumber(r[2]) or 0) .. ',"failingSince":' .. O.time(r[3]) .. ',"lastStatus":' ..
    (tonumber(r[4] or '') or 'null') .. ',"lastError":' .. O.str(r[5]) .. '}', now, ttl)
end

-- endpoint_resume: endpoint `ep` is enabled again: its failures forgotten, its queue back
-- in p hosts from its earliest due delivery (those made before now get a fresh retry
-- budget when leased: enabled_ms); then EVENT:OPERATIONAL_ENDPOINT_ENABLED (kept `ttl`
-- seconds), with how many of its lanes hold deliveries it kept (the heads in its due set).
local function endpoint_resume(p, ep, env, account, now, ttl)
  local q = ep_lib().queue(env, account, ep)
  local k = p .. 'ep:' .. ep
  local was = redis.call('HMGET', k, 'state', 'disabled_ms', 'url')
  redis.call('HSET', k, 'state', 'on', 'enabled_ms', now, 'fails', 0,
    'failing_ms', '', 'disabled_ms', '', 'disabled_why', '', 'updated_ms', now)
  redis.call('ZREM', p .. 'held', q)
  local first = redis.call('ZRANGE', p .. 'due:' .. q, 0, 0, 'WITHSCORES')
  if first[2] then redis.call('ZADD', p .. 'hosts', 'LT', first[2], q) end
  fanout_rebuild(p, env, account)
  local O = op_lib()
  O.write(p, env, account, 'EVENT:OPERATIONAL_ENDPOINT_ENABLED', ep, '{"endpoint":"' .. ep ..
    '","url":' .. O.str(was[3]) .. ',"by":"request","enabledAt":' .. O.time(now) ..
    ',"disabledAt":' .. O.time(was[2]) .. ',"disabledBy":"' ..
    (was[1] == 'held' and 'pixrelay' or 'request') .. '","lanesWaiting":' ..
    redis.call('ZCARD', p .. 'due:' .. q) .. '}', now, ttl)
end
