-- event_after: the events of an account created at or after a point, oldest first (events
-- of one millisecond by id), for a live stream's catching up (api/evstream.c), whichever
-- layout each was written in (lib/event_read.lua). Reads only.
-- KEYS[1] = <prefix>{s<k>}:a:<account>   zset event id -> created_ms
-- ARGV = shard key prefix, from (ms), offset (members of the index to skip), limit
--        (members of the index to read), env, account
-- Returns {how many members of the index were read, then for each event still kept and
--   of that env and account: id, created_ms, type, url, body}.
--@include event_read
if #KEYS ~= 1 or #ARGV ~= 6 then
  return redis.error_reply('ERR event_after: wants 1 keys and 6 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, env, account = ARGV[1], ARGV[5], ARGV[6]
local ids = redis.call('ZRANGE', KEYS[1], ARGV[2], '+inf', 'BYSCORE', 'LIMIT', ARGV[3], ARGV[4],
  'WITHSCORES')
local out = {math.floor(#ids / 2)}
local reader = event_reader(p)
for i = 1, #ids, 2 do
  local id, ms = ids[i], ids[i + 1]
  local e = redis.call('HMGET', p .. 'e:' .. id, 'type', 'url', 'body', 'env', 'account')
  if not e[1] then
    local sid, _, ev = reader_entry(reader, id, ms)
    if sid and stream_view(reader, sid, ev) then e = {ev.type, ev.url, ev.body, ev.env, ev.account} end
  end
  -- the index is the account's: the event must say so too
  if e[1] and e[3] and e[4] == env and e[5] == account then
    out[#out + 1] = id
    out[#out + 1] = ms
    out[#out + 1] = e[1]
    out[#out + 1] = e[2] or ''
    out[#out + 1] = e[3]
  end
end
return out
