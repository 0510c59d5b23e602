-- stream_trim: drop the entries of a shard's stream (p s, lib/event.lua) that no reader needs
-- any more, run by the janitor: those older than the retention, and never one the
-- dispatchers have not consumed yet (after the cursor, p cur's id; with no cursor none is
-- dropped) nor one leased now (from the first entry of each batch in the lease set,
-- '@<first>/<last>', event_settle.lua; or an entry id "<ms>-<seq>" leased alone by an
-- earlier build).
-- What a dropped entry's event still says lives in its hash or its p done:<day> record, and
-- listings forget an id whose event is gone (lib/event_read.lua).
-- KEYS[1] = <prefix>{s<k>}:lease
-- ARGV = shard key prefix, the oldest creation time (ms) to keep for the retention
-- Returns the number of entries dropped. XTRIM MINID ~ drops whole nodes of the stream
-- only: a few entries older than the bound may stay until a later call.
if #KEYS ~= 1 or #ARGV ~= 2 then
  return redis.error_reply('ERR stream_trim: wants 1 keys and 2 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p = ARGV[1]
local m = tonumber(ARGV[2]) or 0
local cur = redis.call('HGET', p .. 'cur', 'id')
if not cur then return 0 end
local function ms_of(sid) return tonumber(string.match(sid, '^(%d+)%-')) end
local c = ms_of(cur)
if not c then return 0 end
if c < m then m = c end
-- the lease set holds what is in flight: bounded by the dispatchers' capacity
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(member, 1, 1) == '@' then member = string.sub(member, 2) end
  local l = string.find(member, '-', 1, true) and ms_of(member)
  if l and l < m then m = l end
end
if m <= 0 then return 0 end
return redis.call('XTRIM', p .. 's', 'MINID', '~', string.format('%d', m))
