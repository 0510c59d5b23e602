-- bank_disconnect: remove a bank connection; its webhook URL is refused from then on. What
-- it heard (log, deduplication, events) stays for the retention.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = id, env, account ('' = any account of env), shard key prefix (<prefix>{s<k>}:)
-- Returns {'ok', account} | {'not_found'}.
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR bank_disconnect: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local c = redis.call('HMGET', KEYS[1], 'account', 'env')
if not c[1] or c[2] ~= ARGV[2] or (ARGV[3] ~= '' and c[1] ~= ARGV[3]) then return {'not_found'} end
redis.call('DEL', KEYS[1])
redis.call('ZREM', ARGV[4] .. 'banks:' .. c[1], ARGV[1])
return {'ok', c[1]}
