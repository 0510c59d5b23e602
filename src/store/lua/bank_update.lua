-- bank_update: change a bank connection (docs/banks.md, "Update a connection"): its trust
-- in the bank's certificate, whether it is the account's default charging connection, and
-- what callers add. The next bank call is judged by the record as it is then: the processes'
-- caches forget the connection ("b:<id>" on the invalidation channel).
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = env, account ('' = any account of env), the shard key prefix (<prefix>{s<k>}:),
--        default ('1': the account's default charging connection in env, the others' flag
--        cleared; '0': not; '' as is), mtls ('1' when a change is for mutual TLS only),
--        the invalidation channel, then pairs of a field of the record and its new value
--        ('' removes the field)
-- Derives from the shard key prefix: banks:<account> (the account's connections) and
-- bank:<id> of each, to clear their default; acct:<env>:<account>, whose charging
-- connection is derived again when the default changes (lib/charging.lua).
-- Returns {'ok', the connection's fields (HGETALL) after the change} | {'not_found'} |
-- {'not_mtls'} (nothing written).
if #KEYS ~= 1 or #ARGV < 6 or #ARGV % 2 == 1 then
  return redis.error_reply('ERR bank_update: wants 1 key and 6 arguments and pairs, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include charging
local c = redis.call('HMGET', KEYS[1], 'account', 'env', 'auth', 'id')
if not c[1] or c[2] ~= ARGV[1] or (ARGV[2] ~= '' and c[1] ~= ARGV[2]) then return {'not_found'} end
if ARGV[5] == '1' and c[3] ~= 'mtls' then return {'not_mtls'} end
for i = 7, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], ARGV[i])
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
if ARGV[4] == '1' then
  bank_mark_default(ARGV[3], c[2], c[1], c[4])
elseif ARGV[4] == '0' then
  redis.call('HDEL', KEYS[1], 'default')
end
if ARGV[4] ~= '' then account_charging(ARGV[3], c[2], c[1], ARGV[6], false) end
redis.call('PUBLISH', ARGV[6], 'b:' .. c[4])
return {'ok', redis.call('HGETALL', KEYS[1])}
