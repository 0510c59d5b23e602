-- ceiling_stream.lua and per-charge order: what ingest would cost Redis with a stream per
-- shard when each event also marks its charge busy in a per-shard hash of the orders with
-- an event in flight (HSETNX <p>busy <order> <event id>; a later event of a busy charge
-- waits in its order list, which the dispatcher reads when the one in flight settles: a
-- path the benchmark's events, one per charge, almost never take).
-- Same arguments as src/store/lua/ingest.lua (tests/bench/bench.py, the ceiling phase).
local p, now, ttl = ARGV[1], ARGV[2], ARGV[4]
local urls = {}
local out = {}
-- (runs of one account's notifications: its head, then 5 values each; the event's id,
-- env, account and type are written as ingest.lua's arguments carry them, in one value)
local a = 5
while a <= #ARGV do
  local env, account = string.match(ARGV[a], '^([^\n]*)\n(.*)$')
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  for _ = 1, n do
    local evt, order = ARGV[a + 1], ARGV[a + 2]
    local seen = redis.call('SET', ARGV[a], evt, 'NX', 'GET', 'EX', ttl)
    if not seen then
      local ak = p .. 'acct:' .. env .. ':' .. account
      local url = urls[ak]
      if not url then
        url = redis.call('HGET', ak, 'postback_url') or ''
        urls[ak] = url
      end
      redis.call('XADD', p .. 's', '*', 'event', ARGV[a + 3], 'url', url, 'order', order,
        'created', now, 'body', ARGV[a + 4])
      if redis.call('HSETNX', p .. 'busy', order, evt) == 0 then
        -- its charge is busy: it waits behind the one in flight
        redis.call('RPUSH', p .. 'o:' .. order, evt)
      end
    end
    out[#out + 1] = seen and 'duplicate' or 'relayed'
    a = a + 5
  end
end
return out
