-- account_admit: before anything of a new business account is written, whether its
-- environment would take it: the hourly limit of the creating key's account, the environment's quotas
-- (lib/account_quota.lua) and its taxID. A refusal here writes nothing of the account;
-- account_index checks the same again, atomically with the creation, for requests that
-- raced past this one. Its one write: a creation refused for its taxID counts in the
-- account's hour (so its keys cannot probe taxIDs without limit), and names the account holding the
-- taxID only to a caller who may know it (account_quota_duplicate).
-- KEYS[1] = <prefix>{<env>}:taxids   hash taxID -> account id (every other key shares {<env>})
-- ARGV = environment key prefix (<prefix>{<env>}:), taxID, the account whose keys' hour
--        counts ('' = a master key), now (ms), accounts an hour, accounts per environment, file bytes per
--        environment (limits: 0 = none), the account's file bytes, the account acting (the
--        new account's owner), the new account's id
-- Returns {'ok'} | {'duplicate', id of the account holding the taxID, or '' when the caller
--   may not know it} | {'rate', ms} | {'accounts', limit} | {'bytes', bytes kept now}
if #KEYS ~= 1 or #ARGV ~= 10 then
  return redis.error_reply('ERR account_admit: wants 1 keys and 10 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include account_quota
local refused = account_quota(ARGV[1], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[8]),
  {per_hour = tonumber(ARGV[5]), accounts = tonumber(ARGV[6]), stored = tonumber(ARGV[7])})
if refused then return refused end
local holder = redis.call('HGET', KEYS[1], ARGV[2])
if holder then
  return account_quota_duplicate(ARGV[1], holder, ARGV[3], ARGV[9], tonumber(ARGV[4]), ARGV[10])
end
return {'ok'}
