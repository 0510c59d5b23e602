-- event_list: one shard's events of an account, newest first, filtered.
-- KEYS[1] = <prefix>{s<k>}:a:<account>   zset event id -> created_ms
-- ARGV = shard key prefix, max created_ms (inclusive), id to start below when
--        created_ms == max ('' = none), min created_ms, state ('' = any),
--        type ('' = any), limit, scan cap
-- Returns a flat list of id, created_ms, type, state, url, attempts, updated_ms,
-- next_ms, last_status, last_error, then k, the number of its deliveries to webhook
-- endpoints, and k times the endpoint id and the DELIVERY_FIELDS values of
-- lib/event_read.lua, for up to `limit` events; then a final element: '1' when more may
-- follow, '0' when the shard has no more. A state filter selects an event whose state,
-- or one of whose deliveries' state, is the one asked for.
-- A pending event in the shard's lease set is being delivered: its state reads
-- 'delivering' (leasing writes nothing into the event, docs/event-layout.md). A member
-- without a hash is a stream event (lib/event_read.lua): its entry is read by its score's
-- ms, once per ms per call, its state derived from the cursor, p done:<day> and its
-- charge's p busy.
--@include event_read
if #KEYS ~= 1 or #ARGV ~= 8 then
  return redis.error_reply('ERR event_list: wants 1 keys and 8 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p = ARGV[1]
local maxs, after, mins = ARGV[2], ARGV[3], ARGV[4]
local want_state, want_type = ARGV[5], ARGV[6]
local limit, cap = tonumber(ARGV[7]), tonumber(ARGV[8])
local out, found, scanned, offset = {}, 0, 0, 0
local reader = event_reader(p)
while found < limit and scanned < cap do
  local ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], maxs, mins, 'WITHSCORES', 'LIMIT', offset, 100)
  if #ids == 0 then return (function() out[#out + 1] = '0'; return out end)() end
  for i = 1, #ids, 2 do
    local id, score = ids[i], ids[i + 1]
    scanned = scanned + 1
    offset = offset + 1
    local skip = (after ~= '' and score == maxs and id >= after)
    if not skip then
      local e = redis.call('HMGET', p .. 'e:' .. id, 'type', 'state', 'url', 'attempts',
        'updated_ms', 'next_ms', 'last_status', 'last_error', 'dests')
      local streamed = false
      if not e[1] then
        local sid, _, ev = reader_entry(reader, id, score)
        local v = sid and stream_view(reader, sid, ev)
        if v then
          -- its state derived (stream_view): delivering is not asked of the lease set
          streamed = true
          e = {v.type, v.state, v.url, v.attempts, v.updated_ms, v.next_ms, v.last_status,
            v.last_error, v.dests}
        end
      end
      if not e[1] then
        -- expired after the retention: the index forgets it
        redis.call('ZREM', KEYS[1], id)
        offset = offset - 1
      elseif not streamed and (e[2] == 'pending' or not e[2]) and redis.call('ZSCORE', p .. 'lease', id) then
        e[2] = 'delivering'
      elseif not e[2] then
        e[2] = 'pending'
      end
      local ds = e[1] and deliveries_of(p, id, e[9]) or {}
      local state_ok = want_state == '' or e[2] == want_state
      for _, d in ipairs(ds) do
        if d[2][1] == want_state then state_ok = true end
      end
      if e[1] and state_ok and (want_type == '' or e[1] == want_type) then
        -- an event without attempts, updated_ms, next_ms of its own reads as never
        -- attempted (layout 2 writes them once an attempt is recorded: docs/event-layout.md)
        for _, v in ipairs({id, score, e[1], e[2], e[3], e[4] or '0', e[5] or score, e[6] or score,
                            e[7] or '', e[8] or '', tostring(#ds)}) do
          out[#out + 1] = v
        end
        for _, d in ipairs(ds) do
          out[#out + 1] = d[1]
          for _, v in ipairs(d[2]) do out[#out + 1] = v end
        end
        found = found + 1
        if found >= limit then break end
      end
    end
  end
end
out[#out + 1] = '1'
return out
