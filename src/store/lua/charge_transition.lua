-- charge_transition: move a charge to a new status once, and record its event.
-- KEYS[1] = <prefix>{s<k>}:ch:<id>   the charge (every other key is in its shard)
-- ARGV = shard key prefix (<prefix>{s<k>}:), charge id, action (pay | expire | refund |
--        fail), the account that asks ('' = any), now (ms), now as "YYYY-MM-DD HH:MM:SS",
--        event id, the amount a refund names ('' = the charge's own), retention (seconds)
-- Returns what charge_move returns.
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV ~= 9 then
  return redis.error_reply('ERR charge_transition: wants 1 keys and 9 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
return charge_move(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
