-- The three writes every ingested notification needs whatever the layout, with the
-- arguments of src/store/lua/ingest.lua (tests/bench/bench.py, the ceiling phase): the upstream
-- id remembered (SET NX GET EX), the event stored (a hash of its body and state) and
-- queued behind its charge (RPUSH). Nothing else: no listing index, no due set, none of the
-- event's other fields. Not pixrelay's script: a measure of what Redis charges for the
-- least an acknowledged, deduplicated, ordered event costs.
local p, ttl = ARGV[1], ARGV[4]
local out = {}
for a = 5, #ARGV, 7 do
  local seen = redis.call('SET', ARGV[a + 1], ARGV[a + 2], 'NX', 'GET', 'EX', ttl)
  if not seen then
    redis.call('HSET', p .. 'e:' .. ARGV[a + 2], 'body', ARGV[a + 4], 'state', 'pending')
    redis.call('RPUSH', p .. 'o:' .. ARGV[a + 5], ARGV[a + 2])
  end
  out[#out + 1] = seen and 'duplicate' or 'relayed'
end
return out
