-- account_index: make an account whose record account_put wrote known to its environment,
-- once: its taxID (unique), its Pix keys, its members (the CPFs of its representatives,
-- which make groups) and its place in the list of accounts. With a platform key given, the
-- account becomes the environment's platform account unless one exists.
-- KEYS[1] = <prefix>{<env>}:taxids   hash taxID -> account id (every other key shares {<env>})
-- ARGV = environment key prefix (<prefix>{<env>}:), account id, taxID ('' = none), created
--        (ms), platform ('1' = the platform account), number n of Pix keys, n Pix keys, then
--        the members' CPFs
-- Returns {'created', id} | {'duplicate', id of the account holding the taxID} |
--   {'existing', id of the platform account made before}
if #KEYS ~= 1 or #ARGV < 6 or #ARGV < 6 + tonumber(ARGV[6]) then
  return redis.error_reply('ERR account_index: wants 1 keys and 6 + n arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local g, id, taxid = ARGV[1], ARGV[2], ARGV[3]
if ARGV[5] == '1' then
  local existing = redis.call('GET', g .. 'platform')
  if existing then return {'existing', existing} end
  redis.call('SET', g .. 'platform', id)
end
if taxid ~= '' then
  local holder = redis.call('HGET', KEYS[1], taxid)
  if holder then return {'duplicate', holder} end
  redis.call('HSET', KEYS[1], taxid, id)
end
local n = tonumber(ARGV[6])
for i = 7, 6 + n do
  redis.call('HSET', g .. 'pixkeys', ARGV[i], id)
end
redis.call('ZADD', g .. 'accounts', ARGV[4], id)
for i = 7 + n, #ARGV do
  redis.call('SADD', g .. 'members:' .. id, ARGV[i])
  redis.call('SADD', g .. 'member:' .. ARGV[i], id)
end
return {'created', id}
