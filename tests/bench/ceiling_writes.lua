-- The three writes every ingested notification needs whatever the layout, with the
-- arguments of src/store/lua/ingest.lua (tests/bench/bench.py, the ceiling phase): the upstream
-- id remembered (SET NX GET EX), the event stored (a hash of its body and state) and
-- queued behind its charge (RPUSH). Nothing else: no listing index, no due set, none of the
-- event's other fields. Not pixrelay's script: a measure of what Redis charges for the
-- least an acknowledged, deduplicated, ordered event costs.
local p, ttl = ARGV[1], ARGV[4]
local out = {}
for i = 0, tonumber(ARGV[5]) - 1 do
  local a = 6 + 11 * i
  local seen = redis.call('SET', p .. 'up:' .. ARGV[a] .. ':' .. ARGV[a + 2], ARGV[a + 6],
    'NX', 'GET', 'EX', ttl)
  if not seen then
    redis.call('HSET', p .. 'e:' .. ARGV[a + 6], 'body', ARGV[a + 7], 'state', 'pending')
    redis.call('RPUSH', p .. 'o:' .. ARGV[a + 8], ARGV[a + 6])
  end
  out[#out + 1] = seen and 'duplicate' or 'relayed'
end
return out
