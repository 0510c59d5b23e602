-- bank_update: change a bank connection (docs/banks.md, "Update a connection"): its trust
-- in the bank's certificate, whether it is the account's default charging connection, and
-- what callers add. The next bank call is judged by the record as it is then.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = env, account ('' = any account of env), the shard key prefix (<prefix>{s<k>}:),
--        default ('1': the account's default charging connection in env, the others' flag
--        cleared; '0': not; '' as is), mtls ('1' when a change is for mutual TLS only),
--        then pairs of a field of the record and its new value ('' removes the field)
-- Derives from the shard key prefix: banks:<account> (the account's connections) and
-- bank:<id> of each, to clear their default.
-- Returns {'ok', the connection's fields (HGETALL) after the change} | {'not_found'} |
-- {'not_mtls'} (nothing written).
if #KEYS ~= 1 or #ARGV < 5 or #ARGV % 2 == 0 then
  return redis.error_reply('ERR bank_update: wants 1 key and 5 arguments and pairs, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local c = redis.call('HMGET', KEYS[1], 'account', 'env', 'auth', 'id')
if not c[1] or c[2] ~= ARGV[1] or (ARGV[2] ~= '' and c[1] ~= ARGV[2]) then return {'not_found'} end
if ARGV[5] == '1' and c[3] ~= 'mtls' then return {'not_mtls'} end
for i = 6, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], ARGV[i])
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
if ARGV[4] == '1' then
  for _, id in ipairs(redis.call('ZRANGE', ARGV[3] .. 'banks:' .. c[1], 0, -1)) do
    if id ~= c[4] and redis.call('HGET', ARGV[3] .. 'bank:' .. id, 'env') == c[2] then
      redis.call('HDEL', ARGV[3] .. 'bank:' .. id, 'default')
    end
  end
  redis.call('HSET', KEYS[1], 'default', '1')
elseif ARGV[4] == '0' then
  redis.call('HDEL', KEYS[1], 'default')
end
return {'ok', redis.call('HGETALL', KEYS[1])}
