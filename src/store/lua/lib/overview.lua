-- The counters of the dashboard's overview (GET /v1/overview, overview_read.lua), kept by
-- event_settle per call, never per event: the outcomes of one call are added up here
-- (ov_add, a table write each) and written at the end of the call (ov_flush), one
-- HINCRBY per field that changed in each of two hashes of the shard:
--   p ovm:<minute>  hash (minute = ms / 60,000), expires 3 h 1 min after a field was made
--   p ovh:<hour>    hash (hour = ms / 3,600,000), expires 25 h after a field was made
-- Their fields: d (attempts delivered), f (attempts failed: retried or dead) and x (events
-- dead), each per environment "<kind>:<env>" and per account "<kind>:<env>:<account>".
-- What failed per postback host or endpoint is kept apart, per scope, so that an overview
-- reads its scope's and never every account's of the shard:
--   p ovf:<hour>:<env>, p ovf:<hour>:<env>:<account>  hash, expires 25 h after a field was
--     made: "F|<queue>" (attempts failed) and "X|<queue>" (dead), the queue being
--     "<env>:<account>:<host or endpoint id>"
-- Cost per call: two HINCRBY per field that changed (of the 3 kinds, for the environment and
-- each account with outcomes in the call; a kind with no outcome writes nothing), two per
-- queue with failed attempts or dead, and an EXPIRE of a hash only when one of its fields
-- was made by the call; nothing when the call recorded no outcome.
local ov_q = {}    -- queue -> {delivered, failed, dead} of this call
local ov_qs = {}   -- the queues, in the order met
local ov_done = {} -- queue -> stream events delivered at their first attempt (the hot path
                   -- adds to it inline: ov_done[q] = (ov_done[q] or 0) + 1)
local function ov_add(q, outcome)
  local c = ov_q[q]
  if not c then
    c = {0, 0, 0}
    ov_q[q] = c
    ov_qs[#ov_qs + 1] = q
  end
  if outcome == 'delivered' then
    c[1] = c[1] + 1
  elseif outcome == 'retry' or outcome == 'dead' then
    c[2] = c[2] + 1
    if outcome == 'dead' then c[3] = c[3] + 1 end
  end
end

local function ov_flush(p, now)
  for q, n in pairs(ov_done) do
    if not ov_q[q] then
      ov_q[q] = {0, 0, 0}
      ov_qs[#ov_qs + 1] = q
    end
    ov_q[q][1] = ov_q[q][1] + n
  end
  if #ov_qs == 0 then return end
  local fields, names = {}, {}
  local function add(name, n)
    if n == 0 then return end
    if not fields[name] then names[#names + 1] = name end
    fields[name] = (fields[name] or 0) + n
  end
  local hourly = {}
  for _, q in ipairs(ov_qs) do
    local c = ov_q[q]
    local c1 = string.find(q, ':', 1, true)
    local c2 = c1 and string.find(q, ':', c1 + 1, true)
    if c2 then
      local env, ea = string.sub(q, 1, c1 - 1), string.sub(q, 1, c2 - 1)
      for i, kind in ipairs({'d', 'f', 'x'}) do
        add(kind .. ':' .. env, c[i])
        add(kind .. ':' .. ea, c[i])
      end
      for _, scope in ipairs({env, ea}) do
        if c[2] > 0 then
          hourly[#hourly + 1] = {scope, 'F|' .. q, c[2]}
        end
        if c[3] > 0 then
          hourly[#hourly + 1] = {scope, 'X|' .. q, c[3]}
        end
      end
    end
  end
  if #names == 0 then return end
  local mk = p .. 'ovm:' .. math.floor(now / 60000)
  local hk = p .. 'ovh:' .. math.floor(now / 3600000)
  -- a field made now (its count is this call's) may be the key's first: the key's expiry is
  -- set then only, so a minute's key is given one about once per field, not at every call
  local mnew, hnew = false, false
  for _, name in ipairs(names) do
    local n = fields[name]
    if redis.call('HINCRBY', mk, name, n) == n then mnew = true end
    if redis.call('HINCRBY', hk, name, n) == n then hnew = true end
  end
  if mnew then redis.call('EXPIRE', mk, 3 * 3600 + 60) end
  if hnew then redis.call('EXPIRE', hk, 25 * 3600) end
  local fk = p .. 'ovf:' .. math.floor(now / 3600000) .. ':'
  for _, f in ipairs(hourly) do
    if redis.call('HINCRBY', fk .. f[1], f[2], f[3]) == f[3] then
      redis.call('EXPIRE', fk .. f[1], 25 * 3600)
    end
  end
end
