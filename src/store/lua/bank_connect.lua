-- bank_connect: a new bank connection of an account (docs/banks.md).
-- KEYS[1] = <prefix>{s<k>}:bank:<id>          the connection (in its account's shard)
-- KEYS[2] = <prefix>{s<k>}:banks:<account>    zset: the account's connections by creation
-- KEYS[3] = <prefix>{s<k>}:acct:<env>:<account>  the account (must exist)
-- ARGV = id, account, env, Pix key, auth (mtls | url-token | a provider's: woovi-rsa),
--        trust list (PEM, '' for a token), SHA-256 of the token ('' for mTLS), created (ms), at most this many per
--        account, the connection key prefix (<prefix>{s<k>}:bank:, to read the others),
--        the pinned subject ('' none), the key pins ('' none), default ('1': the account's
--        default charging connection in env, the others' flag cleared; '' not), the shard
--        key prefix (<prefix>{s<k>}:), the invalidation channel, then pairs of a field
--        of the record and its value ('' not written): the receiving account (rcv_*), and
--        a provider's connection's provider, api_url, api_at, api_token (sealed), bank_ca,
--        prov_keys, prov_priv (sealed). A Pix key '' (a provider's connection made
--        without one) is never taken by another.
-- The account's charging connection is derived again (lib/charging.lua).
-- Returns {'created', charge_via} | {'no_account'} | {'limit'} | {'key_taken', id of the
-- connection that has the Pix key}.
if #KEYS ~= 3 or #ARGV < 15 or #ARGV % 2 == 0 then
  return redis.error_reply('ERR bank_connect: wants 3 keys and 15 arguments and pairs, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include charging
if redis.call('EXISTS', KEYS[3]) == 0 then return {'no_account'} end
local ids = redis.call('ZRANGE', KEYS[2], 0, -1)
if #ids >= tonumber(ARGV[9]) then return {'limit'} end
for _, id in ipairs(ids) do
  if ARGV[4] ~= '' and redis.call('HGET', ARGV[10] .. id, 'pix_key') == ARGV[4] then
    return {'key_taken', id}
  end
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'account', ARGV[2], 'env', ARGV[3], 'pix_key', ARGV[4],
  'auth', ARGV[5], 'client_ca', ARGV[6], 'token_sha', ARGV[7], 'created_ms', ARGV[8])
if ARGV[11] ~= '' then redis.call('HSET', KEYS[1], 'client_subject', ARGV[11]) end
if ARGV[12] ~= '' then redis.call('HSET', KEYS[1], 'client_pins', ARGV[12]) end
for i = 16, #ARGV, 2 do
  if ARGV[i + 1] ~= '' then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('ZADD', KEYS[2], ARGV[8], ARGV[1])
if ARGV[13] == '1' then bank_mark_default(ARGV[14], ARGV[3], ARGV[2], ARGV[1]) end
local ch = account_charging(ARGV[14], ARGV[3], ARGV[2], ARGV[15], false)
return {'created', ch[1]}
