-- Operational events (docs/postbacks.md, "Operational events"): what pixrelay tells an
-- account about its own delivery and reconciliation, written by the script that makes the
-- change it reports (one change, one event) and delivered only to the account's webhook
-- endpoints that name operational types (lib/event.lua's event_write_operational: lane
-- op:<account>, never a postbackUrl).
-- An operational event's id is derived from what it reports, not drawn at random (a script
-- cannot mint a random one): "evt_" + a ULID whose time is the instant of the change, whose
-- random part is the SHA-1 of its type, its subject (the endpoint, the delivery, the bank
-- connection, the connection and day) and that instant, and whose last two characters name
-- the account's shard, as keyspace.h's ks_event_id. The same fact makes the same id, and an
-- id already written is not written again: the same fact never makes two events.
-- op_lib: a table of functions made at the first call of a script that writes one (a call
-- that writes none makes one function, not these; lib/endpoint.lua says why):
--   TYPES: the operational types, the same as pix/event.c's event_operational_types
--   write(p, env, account, etype, subject, data, now, ttl, at): the event of `etype` about
--     `subject`, made at `now` (ms), with `data` (its JSON), kept `ttl` seconds; its id's
--     instant is `at` (default now: a fact of a day has the day's end); returns its id, or
--     nil when it was written already or when none of the account's endpoints takes it (an
--     operational event is made only for an endpoint that names it: an account without one
--     has none, and its events are what they were)
--   str(s): s as a JSON string ('' and nil: null); time(ms): RFC 3339 in UTC ('' or nil:
--     null); date(ms): the day of ms in Brasilia time, "YYYY-MM-DD" (pix/bankday.h)
--   list(items, most): the JSON array of the first `most` of `items` (JSON values), and
--     whether some were left off
--@include event
local op_library = nil
local function op_lib()
  if op_library then return op_library end
  local O = {}
  O.TYPES = {'EVENT:OPERATIONAL_ENDPOINT_DISABLED', 'EVENT:OPERATIONAL_ENDPOINT_ENABLED',
    'EVENT:OPERATIONAL_DELIVERY_DEAD', 'EVENT:OPERATIONAL_DELIVERIES_EXPIRED',
    'EVENT:OPERATIONAL_RECONCILIATION_FAILING', 'EVENT:OPERATIONAL_RECONCILIATION_LATE',
    'EVENT:OPERATIONAL_RECONCILIATION_RECOVERED', 'EVENT:OPERATIONAL_PIX_RECOVERED'}
  local A = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
  local function crock(v) return string.sub(A, v + 1, v + 1) end
  local function id_of(p, etype, subject, now)
    local t, n = {}, tonumber(now)
    for i = 10, 1, -1 do
      local r = n % 32
      t[i] = crock(r)
      n = (n - r) / 32
    end
    local h = redis.sha1hex(etype .. '\n' .. subject .. '\n' .. now)
    for i = 1, 14 do t[10 + i] = crock(tonumber(string.sub(h, 2 * i - 1, 2 * i), 16) % 32) end
    local shard = tonumber(string.match(p, '{s(%d+)}:$') or '0')
    t[25], t[26] = crock(math.floor(shard / 32) % 32), crock(shard % 32)
    return 'evt_' .. table.concat(t)
  end
  function O.write(p, env, account, etype, subject, data, now, ttl, at)
    local fan = account_info(p, env, account).fan
    if not fan or not ep_lib().taking(fan, etype) then return nil end
    local id = id_of(p, etype, subject, at or now)
    if redis.call('EXISTS', p .. 'e:' .. id) == 1 then return nil end
    event_write_operational(p, id, env, account, etype, data, now, ttl)
    return id
  end
  function O.str(s)
    if s == nil or s == '' or s == false then return 'null' end
    return cjson.encode(s)
  end
  -- the civil date of a day number (days since 1970-01-01): y, m, d
  local function civil(z)
    z = z + 719468
    local era = math.floor(z / 146097)
    local doe = z - era * 146097
    local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) -
      math.floor(doe / 146096)) / 365)
    local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
    local mp = math.floor((5 * doy + 2) / 153)
    local d = doy - math.floor((153 * mp + 2) / 5) + 1
    local m = mp < 10 and mp + 3 or mp - 9
    local y = yoe + era * 400 + (m <= 2 and 1 or 0)
    return y, m, d
  end
  function O.time(ms)
    ms = tonumber(ms)
    if not ms then return 'null' end
    local s = math.floor(ms / 1000)
    local day = math.floor(s / 86400)
    local y, m, d = civil(day)
    local r = s - day * 86400
    return string.format('"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ"', y, m, d,
      math.floor(r / 3600), math.floor(r / 60) % 60, r % 60, ms % 1000)
  end
  O.BRT_MS, O.DAY_MS = 3 * 3600000, 86400000
  function O.date(ms)
    local y, m, d = civil(math.floor((tonumber(ms) - O.BRT_MS) / O.DAY_MS))
    return string.format('%04d-%02d-%02d', y, m, d)
  end
  function O.list(items, most)
    local l = {}
    for i = 1, math.min(#items, most) do l[i] = items[i] end
    return '[' .. table.concat(l, ',') .. ']', #items > most
  end
  op_library = O
  return O
end
