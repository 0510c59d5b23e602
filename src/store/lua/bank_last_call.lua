-- bank_last_call: a bank called a connection's webhook and was answered 200 (docs/banks.md,
-- "Seeing it": lastCallAt); each process writes it at most once a minute per connection.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV[1] = now (ms)
-- A connection removed meanwhile stays removed.
-- Returns 1 when written, 0 when there is no such connection.
if #KEYS ~= 1 or #ARGV ~= 1 then
  return redis.error_reply('ERR bank_last_call: wants 1 keys and 1 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'last_call_ms', ARGV[1])
return 1
