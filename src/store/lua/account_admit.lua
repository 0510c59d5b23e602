-- account_admit: before anything of a new business account is written, whether its
-- environment would take it: the creating key's hourly limit, the environment's quotas
-- (lib/account_quota.lua) and its taxID. A refusal here costs no write; account_index checks
-- the same again, atomically with the creation, for requests that raced past this one.
-- Reads only.
-- KEYS[1] = <prefix>{<env>}:taxids   hash taxID -> account id (every other key shares {<env>})
-- ARGV = environment key prefix (<prefix>{<env>}:), taxID, API key id ('' = a master key),
--        now (ms), accounts per key per hour, accounts per environment, file bytes per
--        environment (limits: 0 = none), the account's file bytes
-- Returns {'ok'} | {'duplicate', id of the account holding the taxID} | {'rate', ms} |
--   {'accounts', limit} | {'bytes', bytes kept now}
if #KEYS ~= 1 or #ARGV ~= 8 then
  return redis.error_reply('ERR account_admit: wants 1 keys and 8 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include account_quota
local refused = account_quota(ARGV[1], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[8]),
  {per_hour = tonumber(ARGV[5]), accounts = tonumber(ARGV[6]), stored = tonumber(ARGV[7])})
if refused then return refused end
local holder = redis.call('HGET', KEYS[1], ARGV[2])
if holder then return {'duplicate', holder} end
return {'ok'}
