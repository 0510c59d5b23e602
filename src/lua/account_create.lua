-- account_create: a business account with its Pix keys, members and files, at once.
-- KEYS[1] = <prefix>{<env>}:acct:<id>     the account
-- KEYS[2] = <prefix>{<env>}:taxids        hash CNPJ -> account id (unique per environment)
-- KEYS[3] = <prefix>{<env>}:pixkeys       hash Pix key -> account id
-- KEYS[4] = <prefix>{<env>}:accounts      zset account id -> created_ms
-- KEYS[5] = <prefix>{<env>}:members:<id>  set of the account's members (CPFs)
-- ARGV[1..13] = id, env, owner, created_ms, officialName, tradeName, taxID, EVP key,
--   signing secret, compatibility secret, ingest secret, postbackUrl, details JSON
-- ARGV[14] = member key prefix (<prefix>{<env>}:member:), ARGV[15] = file key prefix
--   (<prefix>{<env>}:file:), ARGV[16] = number of members n, then n CPFs, then
--   pairs of file SHA-256 and bytes
-- Returns {'created'} or {'duplicate', id of the account holding the taxID}.
if #KEYS ~= 5 or #ARGV < 16 or #ARGV < 16 + tonumber(ARGV[16]) then
  return redis.error_reply('ERR account_create: wants 5 keys, 16 arguments and the members')
end
local holder = redis.call('HGET', KEYS[2], ARGV[7])
if holder then return {'duplicate', holder} end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'env', ARGV[2], 'kind', 'business',
  'owner', ARGV[3], 'created_at', ARGV[4], 'officialName', ARGV[5], 'tradeName', ARGV[6],
  'taxID', ARGV[7], 'pix_key', ARGV[8], 'signing_secret', ARGV[9], 'signing_secret_prev', '',
  'webhook_secret', ARGV[10], 'ingest_secret', ARGV[11], 'postback_url', ARGV[12],
  'details', ARGV[13], 'status', 'ACTIVE', 'balance', 0)
redis.call('HSET', KEYS[2], ARGV[7], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[8], ARGV[1], ARGV[7], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
local n = tonumber(ARGV[16])
for i = 1, n do
  local cpf = ARGV[16 + i]
  redis.call('SADD', KEYS[5], cpf)
  redis.call('SADD', ARGV[14] .. cpf, ARGV[1])
end
local i = 17 + n
while i + 1 <= #ARGV do
  redis.call('SET', ARGV[15] .. ARGV[i], ARGV[i + 1], 'NX')
  i = i + 2
end
return {'created'}
