-- bank_disconnect: remove a bank connection; its webhook URL is refused from then on. What
-- it heard (log, deduplication, events) stays for the retention.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = id, env, account ('' = any account of env), shard key prefix (<prefix>{s<k>}:),
--        the invalidation channel
-- The account's charging connection is derived again (lib/charging.lua): an account whose
-- charges went to this connection no longer sends them there. The processes' caches forget
-- the connection ("b:<id>").
-- Returns {'ok', account} | {'not_found'}.
if #KEYS ~= 1 or #ARGV ~= 5 then
  return redis.error_reply('ERR bank_disconnect: wants 1 keys and 5 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include charging
local c = redis.call('HMGET', KEYS[1], 'account', 'env')
if not c[1] or c[2] ~= ARGV[2] or (ARGV[3] ~= '' and c[1] ~= ARGV[3]) then return {'not_found'} end
redis.call('DEL', KEYS[1])
redis.call('ZREM', ARGV[4] .. 'banks:' .. c[1], ARGV[1])
account_charging(ARGV[4], ARGV[2], c[1], ARGV[5], false)
redis.call('PUBLISH', ARGV[5], 'b:' .. ARGV[1])
return {'ok', c[1]}
