-- bank_credentials: give a bank connection the bank's API credentials (its client secret
-- and private key sealed by the caller), replacing earlier ones.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = env, API URL, token URL, client id, sealed client secret, certificate (PEM),
--        sealed private key, the bank's CA (PEM, '' = the system's), shard key prefix
--        (<prefix>{s<k>}:), the invalidation channel, now (ms), the OAuth2 scopes asked for
--        ('' = none), the sealed extra headers and query parameters ('' = none), the names
--        of the extra headers and query keys (comma-separated, '' = none)
-- When it is the account's charging connection (lib/charging.lua), the account's record
-- names it (field bank_api): its charges are then created at the bank; the processes'
-- caches forget the account ("a:<account>"). They forget the connection too ("b:<id>").
-- Its reconciliation is due now (bankrec and bankok:<env> of the shard, derived from the
-- shard key prefix: see bank_recon); its success clock starts now unless it ran before.
-- Returns the connection's fields (HGETALL) after the change, or {} when there is no such
-- connection in env.
if #KEYS ~= 1 or #ARGV ~= 16 then
  return redis.error_reply('ERR bank_credentials: wants 1 keys and 16 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include charging
local c = redis.call('HMGET', KEYS[1], 'env', 'account', 'id')
if c[1] ~= ARGV[1] then return {} end
redis.call('HSET', KEYS[1], 'api_url', ARGV[2], 'token_url', ARGV[3], 'client_id', ARGV[4],
  'client_secret', ARGV[5], 'cert', ARGV[6], 'key', ARGV[7], 'bank_ca', ARGV[8],
  'api_scope', ARGV[12], 'api_headers', ARGV[13], 'api_query', ARGV[14],
  'api_header_names', ARGV[15], 'api_query_names', ARGV[16])
-- the reconciliation's first window starts a little before the first credentials
redis.call('HSETNX', KEYS[1], 'api_at', ARGV[11])
redis.call('ZADD', ARGV[9] .. 'bankrec', ARGV[11], c[3])
redis.call('ZADD', ARGV[9] .. 'bankok:' .. ARGV[1], 'NX', ARGV[11], c[3])
account_charging(ARGV[9], c[1], c[2], ARGV[10], false)
redis.call('PUBLISH', ARGV[10], 'b:' .. c[3])
return redis.call('HGETALL', KEYS[1])
