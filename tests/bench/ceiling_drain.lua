-- What delivering a backlog would cost Redis with a stream per shard (tests/bench/bench.py,
-- the drain ceiling; docs/event-layout.md, "Next: a stream per shard, measured alone"): one
-- call of a dispatcher leases the next N entries of the shard's stream and settles N
-- delivered ones, as pixrelay's event_settle does in one call. Redis alone runs it with no
-- dispatcher, so a call settles the entries it has just leased: the same commands, and the
-- same entries (with their 1 KB bodies) answered, as a call that settles the previous
-- call's. Not pixrelay's script.
-- KEYS[1] = <p>s (the stream)  KEYS[2] = <p>done (hash: event id -> outcome)
-- KEYS[3] = <p>busy (hash: order key -> event id in flight)  KEYS[4] = <p>lease (zset),
-- KEYS[5] = <p>cursor (the last entry leased; mode range)
-- ARGV[1] = group  [2] = consumer  [3] = N  [4] = lease (ms)
-- [5] = mode: group = the consumer group's pending entries are the leases (XAUTOCLAIM
--   takes back those that ran out, XREADGROUP leases, XACK settles); range = XRANGE from a
--   cursor, the leases a zset as today (ZADD at lease, ZREM at settle)
-- [6] = 1: the settled events' charges are no longer busy (HDEL <p>busy of their orders)
-- Returns for each leased entry: entry id, event id, url, body, account, env, order
local s, n, mode = KEYS[1], tonumber(ARGV[3]), ARGV[5]
local entries
if mode == 'group' then
  -- leases that ran out first (none here: an empty scan of the pending entries)
  redis.call('XAUTOCLAIM', s, ARGV[1], ARGV[2], ARGV[4], '0-0', 'COUNT', n, 'JUSTID')
  local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', n, 'STREAMS', s, '>')
  entries = r and r[1][2] or {}
else
  local t = redis.call('TIME')
  local ends = t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[4])
  -- leases that ran out first (none here)
  redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ends - tonumber(ARGV[4]), 'LIMIT', 0, n)
  local cur = redis.call('GET', KEYS[5])
  entries = redis.call('XRANGE', s, cur and '(' .. cur or '-', '+', 'COUNT', n)
  if #entries > 0 then
    local z = {}
    for _, e in ipairs(entries) do
      z[#z + 1] = ends
      z[#z + 1] = e[1]
    end
    redis.call('ZADD', KEYS[4], unpack(z))
    redis.call('SET', KEYS[5], entries[#entries][1])
  end
end
if #entries == 0 then return {} end
local out, ids, done, orders = {}, {}, {}, {}
for i, e in ipairs(entries) do
  -- fields as ceiling_stream.lua writes them: id env account type url order created body
  local f = e[2]
  ids[i] = e[1]
  for _, v in ipairs({e[1], f[2], f[10], f[16], f[6], f[4], f[12]}) do out[#out + 1] = v end
  done[#done + 1] = f[2]
  done[#done + 1] = 'delivered 200'
  orders[i] = f[12]
end
-- settled: the lease dropped and the outcome recorded, one command each for the batch
if mode == 'group' then
  redis.call('XACK', s, ARGV[1], unpack(ids))
else
  redis.call('ZREM', KEYS[4], unpack(ids))
end
redis.call('HSET', KEYS[2], unpack(done))
if ARGV[6] == '1' then redis.call('HDEL', KEYS[3], unpack(orders)) end
return out
