-- account_index: make an account whose record account_put wrote known to its environment,
-- once: its taxID (unique), its Pix keys and its place in the list of accounts. A business
-- account also gets its owner, its review status (pending: in the operator's review queue;
-- or approved), its members (the CPFs of its representatives; they make groups only between
-- approved accounts of one owner, see transfer_resolve) and what it counts against the
-- quotas, which are checked here again, atomically with the creation (lib/account_quota.lua):
-- of two processes creating at once, the one that would pass a limit is refused.
-- With kind '1' the account becomes the environment's platform account unless one exists.
-- KEYS[1] = <prefix>{<env>}:taxids   hash taxID -> account id (every other key shares {<env>})
-- ARGV = environment key prefix g (<prefix>{<env>}:), account id, taxID ('' = none), created
--        (ms), kind ('1' = the platform account, '0' = a business account), number n of Pix
--        keys, n Pix keys; for a business account then: owner, review status ('pending' |
--        'approved'), the account whose keys' hour counts ('' = a master key), accounts an hour, accounts
--        per environment, file bytes per environment (limits: 0 = none), the account's file
--        bytes, and the members' CPFs
-- Returns {'created', id} | {'duplicate', id of the account holding the taxID, or '' when
--   the caller may not know it} | {'existing', id of the platform account made before} |
--   {'rate', ms} | {'accounts', limit} | {'bytes', bytes kept now}; nothing is written
--   unless 'created', but for a business account refused for its taxID, which counts in
--   the account's hour (account_quota_duplicate), as in account_admit.
if #KEYS ~= 1 or #ARGV < 6 or #ARGV < 6 + tonumber(ARGV[6]) + (ARGV[5] == '1' and 0 or 8) then
  return redis.error_reply('ERR account_index: wants 1 keys and 6 + n (+ 8 + members) arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include account_quota
local g, id, taxid, created = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local n = tonumber(ARGV[6])
local b = 7 + n -- the business account's arguments
if ARGV[5] == '1' then
  local existing = redis.call('GET', g .. 'platform')
  if existing then return {'existing', existing} end
else
  local refused = account_quota(g, ARGV[b + 2], created, tonumber(ARGV[b + 6]),
    {per_hour = tonumber(ARGV[b + 3]), accounts = tonumber(ARGV[b + 4]),
     stored = tonumber(ARGV[b + 5])})
  if refused then return refused end
end
if taxid ~= '' then
  local holder = redis.call('HGET', KEYS[1], taxid)
  if holder then
    if ARGV[5] == '1' then return {'duplicate', holder} end
    return account_quota_duplicate(g, holder, ARGV[b + 2], ARGV[b], created, id)
  end
  redis.call('HSET', KEYS[1], taxid, id)
end
if ARGV[5] == '1' then redis.call('SET', g .. 'platform', id) end
for i = 7, 6 + n do
  redis.call('HSET', g .. 'pixkeys', ARGV[i], id)
end
redis.call('ZADD', g .. 'accounts', created, id)
if ARGV[5] == '1' then return {'created', id} end
local owner, review, key_id, bytes = ARGV[b], ARGV[b + 1], ARGV[b + 2], tonumber(ARGV[b + 6])
redis.call('HSET', g .. 'owners', id, owner)
redis.call('HSET', g .. 'kyc', id, review)
if review == 'pending' then redis.call('ZADD', g .. 'review', created, id) end
account_quota_count(g, key_id, created, id)
if bytes > 0 then redis.call('HINCRBY', g .. 'usage', 'file_bytes', bytes) end
for i = b + 7, #ARGV do
  redis.call('SADD', g .. 'members:' .. id, ARGV[i])
  redis.call('SADD', g .. 'member:' .. ARGV[i], id)
end
return {'created', id}
