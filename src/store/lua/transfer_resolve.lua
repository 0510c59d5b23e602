-- transfer_resolve: the accounts of a transfer's Pix keys, and whether both are in the
-- caller's group. The spec's rule is the caller itself, or an account sharing a member
-- (a representative, by CPF) with it; a member is a claim made at creation, so it counts
-- only once the operator has approved both accounts' KYC, and only between accounts of
-- one owner (docs/security.md, "Groups"). Reads only.
-- KEYS[1] = <prefix>{<env>}:pixkeys   hash Pix key -> account id (every other key shares {<env>})
-- ARGV = from_key, to_key, caller account, environment key prefix g (<prefix>{<env>}:)
-- Returns {'ok', from account, to account} | {'not_found', 'from_key' | 'to_key'} |
--   {'forbidden', the caller's review status ('' = none: the platform account)} | {'same'}
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR transfer_resolve: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local caller, g = ARGV[3], ARGV[4]
local from = redis.call('HGET', KEYS[1], ARGV[1])
if not from then return {'not_found', 'from_key'} end
local to = redis.call('HGET', KEYS[1], ARGV[2])
if not to then return {'not_found', 'to_key'} end
local status = redis.call('HGET', g .. 'kyc', caller)
local function in_group(acct)
  if acct == caller then return true end
  if status ~= 'approved' or redis.call('HGET', g .. 'kyc', acct) ~= 'approved' then
    return false
  end
  local owners = redis.call('HMGET', g .. 'owners', caller, acct)
  if not owners[1] or owners[1] ~= owners[2] then return false end
  return redis.call('SINTERCARD', 2, g .. 'members:' .. caller, g .. 'members:' .. acct,
    'LIMIT', 1) > 0
end
if not in_group(from) or not in_group(to) then return {'forbidden', status or ''} end
if from == to then return {'same'} end
return {'ok', from, to}
