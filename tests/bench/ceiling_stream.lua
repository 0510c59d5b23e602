-- What ingest would cost Redis with a stream per shard, with the arguments of
-- src/store/lua/ingest.lua (tests/bench/bench.py, the ceiling phase; docs/event-layout.md,
-- "Next: a stream per shard, measured alone"): per notification the upstream id remembered
-- (SET NX GET EX) and, when it is new, ONE XADD to the shard's stream <p>s whose entry is
-- the event itself (id, env, account, type, url, order, created, body): its listing, in
-- time order, and the queue of its first attempt. No hash, no listing index, no due set, no
-- order list. The account's URL is read once per call, as ingest.lua does. Not pixrelay's
-- script: a measure, before anyone rewrites pixrelay for it.
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
    end
    out[#out + 1] = seen and 'duplicate' or 'relayed'
    a = a + 5
  end
end
return out
