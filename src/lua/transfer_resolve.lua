-- transfer_resolve: the accounts of a transfer's Pix keys, and whether both are in the
-- caller's group (the spec's rule: the caller itself, or an account sharing a member with
-- it). Reads only.
-- KEYS[1] = <prefix>{<env>}:pixkeys   hash Pix key -> account id (members share {<env>})
-- ARGV = from_key, to_key, caller account, members key prefix (<prefix>{<env>}:members:)
-- Returns {'ok', from account, to account} | {'not_found', 'from_key' | 'to_key'} |
--   {'forbidden'} | {'same'}
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR transfer_resolve: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local caller = ARGV[3]
local from = redis.call('HGET', KEYS[1], ARGV[1])
if not from then return {'not_found', 'from_key'} end
local to = redis.call('HGET', KEYS[1], ARGV[2])
if not to then return {'not_found', 'to_key'} end
local function in_group(acct)
  if acct == caller then return true end
  return redis.call('SINTERCARD', 2, ARGV[4] .. caller, ARGV[4] .. acct, 'LIMIT', 1) > 0
end
if not in_group(from) or not in_group(to) then return {'forbidden'} end
if from == to then return {'same'} end
return {'ok', from, to}
