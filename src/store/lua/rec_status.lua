-- rec_status: what the bank said of a recurrence (its /rec callback, the reconciliation's
-- GET /rec/{idRec}, or its answer to pixrelay's cancel), in one durable write with its event.
-- A recurrence moves only forward: CREATED, then APPROVED, then one final status
-- (REJECTED, EXPIRED, CANCELLED; also straight from CREATED). A status it holds already, or
-- one behind it, is a duplicate and changes nothing: each status makes its event once, in
-- the order of the recurrence's own lane, rec:<id> (docs/event-layout.md, "Lanes").
--   p rec:<id>                 hash: the recurrence (status, updated_at, closing)
--   p recopen:<connection>     zset: left once the recurrence is final; its score is when
--                              the reconciliation last asked about it (touch = 1)
--   p bday:<connection>:<day>  hash: the day's report counts each status taken, rec_<status>,
--                              and those the reconciliation took first, rec_recovered
-- and the event (lib/event.lua) to the recurrence's postbackUrl, else the account's.
-- KEYS[1] = <prefix>{s<k>}:recx:<account>   hash idRec -> id
-- ARGV = shard key prefix, account, env, idRec, status (CREATED | APPROVED | ...), updated at
--        (text), now (ms), closing (JSON, '' = none), event id, source (webhook |
--        reconciliation | request), retention (seconds), touch (1: the reconciliation asked),
--        day (YYYY-MM-DD, Brasilia time, of now)
-- Returns {'changed', event id, status, head, updated_at, closing}, {'duplicate', '', status,
-- head, updated_at, closing} (the recurrence as it stands), or {'unknown'} (no recurrence of
-- the account has that idRec).
--@include event
if #KEYS ~= 1 or #ARGV ~= 13 then
  return redis.error_reply('ERR rec_status: wants 1 keys and 13 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, account, env, idrec, status = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local at, now, closing, evt, source, ttl = ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9], ARGV[10],
  tonumber(ARGV[11])
local id = redis.call('HGET', KEYS[1], idrec)
if not id then return {'unknown'} end
local rk = p .. 'rec:' .. id
local r = redis.call('HMGET', rk, 'status', 'head', 'updated_at', 'closing', 'postback_url', 'connection')
if not r[1] or not r[2] then return {'unknown'} end
local RANK = {CREATED = 0, APPROVED = 1, REJECTED = 2, EXPIRED = 2, CANCELLED = 2}
if not RANK[status] then
  return redis.error_reply('ERR rec_status: no such status ' .. status)
end
if ARGV[12] == '1' and RANK[r[1]] < 2 then
  redis.call('ZADD', p .. 'recopen:' .. r[6], now, id)
end
if RANK[status] <= RANK[r[1]] then
  return {'duplicate', '', r[1], r[2], r[3], r[4] or ''}
end
redis.call('HSET', rk, 'status', status, 'updated_at', at, 'closing', closing)
if RANK[status] == 2 then redis.call('ZREM', p .. 'recopen:' .. r[6], id) end
local dk = p .. 'bday:' .. r[6] .. ':' .. ARGV[13]
redis.call('HINCRBY', dk, 'rec_' .. status, 1)
if source == 'reconciliation' then redis.call('HINCRBY', dk, 'rec_recovered', 1) end
redis.call('EXPIRE', dk, ttl)
local data = r[2] .. '"status":"' .. status .. '","updatedAt":"' .. at .. '"'
if closing ~= '' then data = data .. ',"closing":' .. closing end
data = data .. ',"source":"' .. source .. '"}'
local etype = 'EVENT:RECURRENCE_' .. status
local url = r[5] or ''
if url == '' then url = account_info(p, env, account).url end
local body = '{"id":"' .. evt .. '","event":"' .. etype .. '","data":' .. data .. '}'
event_write(p, evt, env, account, etype, url, body, 'rec:' .. id, now, ttl)
return {'changed', evt, status, r[2], at, closing}
