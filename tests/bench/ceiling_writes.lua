-- The three writes every ingested notification needs whatever the layout, with the
-- arguments of src/store/lua/ingest.lua (tests/bench/bench.py, the ceiling phase): the upstream
-- id remembered (SET NX GET EX), the event stored (a hash of its body and state) and
-- queued behind its charge (RPUSH). Nothing else: no listing index, no due set, none of the
-- event's other fields. Not pixrelay's script: a measure of what Redis charges for the
-- least an acknowledged, deduplicated, ordered event costs.
local p, ttl = ARGV[1], ARGV[4]
-- (runs of one account's notifications: its head, then 5 values each)
local out = {}
local a = 5
while a <= #ARGV do
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  for _ = 1, n do
    local seen = redis.call('SET', ARGV[a], ARGV[a + 1], 'NX', 'GET', 'EX', ttl)
    if not seen then
      redis.call('HSET', p .. 'e:' .. ARGV[a + 1], 'body', ARGV[a + 4], 'state', 'pending')
      redis.call('RPUSH', p .. 'o:' .. ARGV[a + 2], ARGV[a + 1])
    end
    out[#out + 1] = seen and 'duplicate' or 'relayed'
    a = a + 5
  end
end
return out
