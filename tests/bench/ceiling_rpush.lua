-- One RPUSH of each notification's body, with the arguments of src/store/lua/ingest.lua
-- (tests/bench/bench.py, the ceiling phase): what a script call carrying many
-- notifications costs Redis by itself, to compare with raw RPUSH.
local out = {}
for a = 5, #ARGV, 7 do
  redis.call('RPUSH', ARGV[1] .. 'q', ARGV[a + 4])
  out[#out + 1] = 'relayed'
end
return out
