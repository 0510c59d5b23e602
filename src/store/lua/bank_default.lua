-- bank_default: make a connection the default of its account in its environment, the one
-- the account's charges go to when it has several (its Pix key on their BR Code, or its
-- bank's API); the account's other connections of env stop being it.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = id, env, account ('' = any account of env), shard key prefix (<prefix>{s<k>}:, for
--        banks:<account>, the other bank:<id> and acct:<env>:<account>), the invalidation
--        channel
-- Returns the connection's fields (HGETALL) after the change, or {} when there is no such
-- connection.
if #KEYS ~= 1 or #ARGV ~= 5 then
  return redis.error_reply('ERR bank_default: wants 1 keys and 5 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include charging
local c = redis.call('HMGET', KEYS[1], 'account', 'env')
if not c[1] or c[2] ~= ARGV[2] or (ARGV[3] ~= '' and c[1] ~= ARGV[3]) then return {} end
bank_mark_default(ARGV[4], ARGV[2], c[1], ARGV[1])
account_charging(ARGV[4], ARGV[2], c[1], ARGV[5], false)
return redis.call('HGETALL', KEYS[1])
