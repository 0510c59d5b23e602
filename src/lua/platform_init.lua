-- platform_init: create the operator's platform account of an environment once.
-- KEYS[1] = <prefix>{<env>}:platform          the platform account id
-- KEYS[2] = <prefix>{<env>}:acct:<new id>     the account record, if created
-- KEYS[3] = <prefix>{<env>}:accounts          zset of account ids by creation
-- KEYS[4] = <prefix>{<env>}:pixkeys           hash Pix key -> account id
-- ARGV = new id, env, created_ms, name, random Pix key (EVP), postback signing
--        secret (whsec_...), compatibility webhook secret, ingest secret (whsec_...)
-- Returns {id, 1} when created now, {id, 0} when it already existed.
if #KEYS ~= 4 or #ARGV ~= 8 then
  return redis.error_reply('ERR platform_init: wants 4 keys and 8 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local existing = redis.call('GET', KEYS[1])
if existing then
  return {existing, 0}
end
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'env', ARGV[2], 'kind', 'platform',
  'officialName', ARGV[4], 'tradeName', ARGV[4], 'status', 'ACTIVE',
  'created_at', ARGV[3], 'owner', '', 'pix_key', ARGV[5],
  'signing_secret', ARGV[6], 'signing_secret_prev', '', 'webhook_secret', ARGV[7],
  'postback_url', '', 'balance', 0, 'ingest_secret', ARGV[8])
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[5], ARGV[1])
return {ARGV[1], 1}
