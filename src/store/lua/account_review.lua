-- account_review: the operator's decision on an account's KYC. 'approved' makes its members
-- count for groups at once (transfer_resolve); 'rejected', also of an account approved
-- before, stops them at once. The account leaves the review queue either way. An account
-- made before reviews existed gets its owner from the record here.
-- KEYS[1] = <prefix>{<env>}:kyc   hash account id -> review status (every other key shares
--           {<env>})
-- ARGV = environment key prefix g (<prefix>{<env>}:), account id, 'approved' | 'rejected',
--        the account's owner (from its record)
-- Returns {'ok', the status before ('' = none)} | {'not_found'} | {'platform'}
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR account_review: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local g, id, decision, owner = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if decision ~= 'approved' and decision ~= 'rejected' then
  return redis.error_reply('ERR account_review: the decision must be approved or rejected')
end
if not redis.call('ZSCORE', g .. 'accounts', id) then return {'not_found'} end
if redis.call('GET', g .. 'platform') == id then return {'platform'} end
local before = redis.call('HGET', KEYS[1], id) or ''
redis.call('HSET', KEYS[1], id, decision)
redis.call('ZREM', g .. 'review', id)
if owner ~= '' then redis.call('HSETNX', g .. 'owners', id, owner) end
return {'ok', before}
