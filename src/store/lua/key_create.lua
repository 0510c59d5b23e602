-- key_create: store a new API key, known only by the SHA-256 of its text.
-- KEYS[1] = <prefix>{keys}:h:<sha256>   the key record
-- KEYS[2] = <prefix>{keys}:id:<key id>  id -> sha256
-- KEYS[3] = <prefix>{keys}:all          zset of key ids by creation time
-- The key is also listed in <prefix>{keys}:env:<env> and <prefix>{keys}:acct:<env>:<account>
-- (same hash tag), the indexes key_list pages through.
-- ARGV = id, env, kind, account, description, created_ms, hint, sha256
-- Returns 1, or an error when the hash or id already exists.
if #KEYS ~= 3 or #ARGV ~= 8 then
  return redis.error_reply('ERR key_create: wants 3 keys and 8 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p = string.match(KEYS[3], '^(.*{keys}:)all$')
if not p then
  return redis.error_reply('ERR key_create: KEYS[3] must be <prefix>{keys}:all, got ' .. KEYS[3])
end
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then
  return redis.error_reply('ERR key already exists')
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'env', ARGV[2], 'kind', ARGV[3],
  'account', ARGV[4], 'description', ARGV[5], 'created_at', ARGV[6],
  'hint', ARGV[7], 'last_used_at', '', 'revoked_at', '')
redis.call('SET', KEYS[2], ARGV[8])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1])
redis.call('ZADD', p .. 'env:' .. ARGV[2], ARGV[6], ARGV[1])
redis.call('ZADD', p .. 'acct:' .. ARGV[2] .. ':' .. ARGV[4], ARGV[6], ARGV[1])
return 1
