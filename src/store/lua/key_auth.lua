-- key_auth: look an API key up by the SHA-256 of its text.
-- KEYS[1] = <prefix>{keys}:h:<sha256>
-- ARGV[1] = now in ms; ARGV[2] = how old last_used_at may grow before it is
-- written again (keeps authentication from writing on every request)
-- Returns false when unknown, else {id, env, kind, account, revoked_at}.
if #KEYS ~= 1 or #ARGV ~= 2 then
  return redis.error_reply('ERR key_auth: wants 1 keys and 2 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local r = redis.call('HMGET', KEYS[1], 'id', 'env', 'kind', 'account', 'revoked_at', 'last_used_at')
if not r[1] then
  return false
end
if r[5] == '' then
  local last = tonumber(r[6]) or 0
  if tonumber(ARGV[1]) - last >= tonumber(ARGV[2]) then
    redis.call('HSET', KEYS[1], 'last_used_at', ARGV[1])
  end
end
return {r[1], r[2], r[3], r[4], r[5]}
