-- transfer_credit: give the money of a debited internal transfer to its destination, once
-- (however often it is called for the same transfer).
-- KEYS[1] = <prefix>{s<k>}:xin:<transfer id>   remembers that the credit happened
-- ARGV = destination shard prefix, transfer id, amount, from, to, from_key, to_key, at (ms),
--        at as text, env, event id (destination), retention (seconds)
-- Returns {'credited'} | {'already'}
--@include event
--@include transfer
if #KEYS ~= 1 or #ARGV ~= 12 then
  return redis.error_reply('ERR transfer_credit: wants 1 keys and 12 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[12]) then return {'already'} end
local t = {id = ARGV[2], amount = ARGV[3], from = ARGV[4], to = ARGV[5], from_key = ARGV[6],
  to_key = ARGV[7], at = ARGV[8], at_txt = ARGV[9], env = ARGV[10]}
transfer_side(ARGV[1], t, t.to, tonumber(t.amount), ARGV[11], 'in', ARGV[12])
return {'credited'}
