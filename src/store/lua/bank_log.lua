-- bank_log: a bank connection and what it heard, newest first (written by bank_pix).
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- KEYS[2] = <prefix>{s<k>}:blog:<id>
-- ARGV = first, last (LRANGE indexes)
-- Returns {the connection's fields (HGETALL), the entries}.
if #KEYS ~= 2 or #ARGV ~= 2 then
  return redis.error_reply('ERR bank_log: wants 2 keys and 2 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], ARGV[1], ARGV[2])}
