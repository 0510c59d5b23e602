-- One RPUSH of each notification's body, with the arguments of src/store/lua/ingest.lua
-- (tests/bench/bench.py, the ceiling phase): what a script call carrying many
-- notifications costs Redis by itself, to compare with raw RPUSH.
-- (runs of one account's notifications: its head, then 5 values each)
local out = {}
local a = 5
while a <= #ARGV do
  local n = tonumber(ARGV[a + 1])
  a = a + 2
  for _ = 1, n do
    redis.call('RPUSH', ARGV[1] .. 'q', ARGV[a + 4])
    out[#out + 1] = 'relayed'
    a = a + 5
  end
end
return out
