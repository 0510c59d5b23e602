-- key_revoke: mark a key revoked; it stops working at once for every process.
-- KEYS[1] = <prefix>{keys}:h:<sha256>
-- ARGV[1] = now in ms, ARGV[2] = the invalidation channel, ARGV[3] = its message
-- Every pixrelay process that caches keys listens on the channel and forgets the key.
-- Returns 1 when revoked now, 2 when it already was, 0 when unknown.
if #KEYS ~= 1 or #ARGV ~= 3 then
  return redis.error_reply('ERR key_revoke: wants 1 keys and 3 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local id = redis.call('HGET', KEYS[1], 'id')
if not id then
  return 0
end
if redis.call('HGET', KEYS[1], 'revoked_at') ~= '' then
  return 2
end
redis.call('HSET', KEYS[1], 'revoked_at', ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
