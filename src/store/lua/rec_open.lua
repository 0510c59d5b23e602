-- rec_open: the recurrences of a connection that are not final, for the reconciliation to ask
-- the bank about (GET /rec/{idRec}), those asked longest ago first.
-- KEYS[1] = <prefix>{s<k>}:recopen:<connection>   zset id -> when last asked (ms)
-- ARGV = recurrence key prefix (<prefix>{s<k>}:rec:), how many at most
-- Returns the idRec of each (a recurrence that is gone leaves the set).
if #KEYS ~= 1 or #ARGV ~= 2 then
  return redis.error_reply('ERR rec_open: wants 1 keys and 2 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do
  local idrec = redis.call('HGET', ARGV[1] .. id, 'idrec')
  if idrec then out[#out + 1] = idrec else redis.call('ZREM', KEYS[1], id) end
end
return out
