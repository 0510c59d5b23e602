-- endpoint_list: the webhook endpoints of an account in an environment, oldest first
-- (lib/endpoint.lua). Reads only.
-- KEYS[1] = <prefix>{s<k>}:eps:<env>:<account>
-- ARGV = shard key prefix
-- Returns the HGETALL of each endpoint's record (at most the limit of an account's).
if #KEYS ~= 1 or #ARGV ~= 1 then
  return redis.error_reply('ERR endpoint_list: wants 1 keys and 1 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, 99)) do
  local h = redis.call('HGETALL', ARGV[1] .. 'ep:' .. id)
  if #h > 0 then out[#out + 1] = h end
end
return out
