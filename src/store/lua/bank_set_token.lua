-- bank_set_token: a URL-token connection's new token, registered at its bank (docs/banks.md,
-- "Connect a bank", register-webhook): its SHA-256 replaces the one the caller read before it
-- registered the new URL, so that a registration made meanwhile by another is not undone.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = env, the new token's SHA-256 (hex), the SHA-256 the caller read (hex), the
--        invalidation channel (the processes' caches forget the connection: "b:<id>")
-- Returns 1 when replaced; 0 when there is no URL-token connection of env by that id; 2 when
-- its token is no longer the one read (nothing written).
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR bank_set_token: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local c = redis.call('HMGET', KEYS[1], 'env', 'auth', 'token_sha', 'id')
if c[1] ~= ARGV[1] or c[2] ~= 'url-token' then return 0 end
if c[3] ~= ARGV[3] then return 2 end
redis.call('HSET', KEYS[1], 'token_sha', ARGV[2])
redis.call('PUBLISH', ARGV[4], 'b:' .. c[4])
return 1
