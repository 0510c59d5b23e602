-- account_charging: derive the charging connection of an account whose record has none
-- yet (written by a version before it: docs/banks.md, "The key on the QR"), when one of
-- its charges needs it.
-- KEYS[1] = <prefix>{s<k>}:acct:<env>:<account>
-- ARGV = env, account, shard key prefix (<prefix>{s<k>}:, for banks:<account> and
--        bank:<id>), the invalidation channel
-- Returns {charge_via, charge_key, bank_api or ''} (see lib/charging.lua).
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR account_charging: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
--@include charging
return account_charging(ARGV[3], ARGV[1], ARGV[2], ARGV[4], true)
