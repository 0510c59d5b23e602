-- bank_report: what a bank connection heard on one day (Brasilia time), for the proof that
-- no Pix was missed (docs/bank-api.md, "The day's report"): the counts bank_pix kept, the
-- endToEndIds the reconciliation took first, how far the reconciliation has come, the
-- spans of the bank's list it read (bank_recon_read), and what another connection held.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>, KEYS[2] = <prefix>{s<k>}:bday:<id>:<day>,
-- KEYS[3] = <prefix>{s<k>}:brec:<id>:<day>, KEYS[4] = <prefix>{s<k>}:bread:<id>,
-- KEYS[5] = <prefix>{s<k>}:bels:<id>:<day>
-- ARGV[1] = env, ARGV[2] = account ('' = any of env), ARGV[3] = list entries to return at most
-- Returns {} when there is no such connection (of the account), else
-- {{env, account, rec_at, rec_ok_ms, api_url, created_ms, api_at}, HGETALL of the day, its
--  first endToEndIds, how many there are, the spans read ("<from ms>-<to ms>", in order),
--  its first "<endToEndId> <connection>" another connection held, how many there are}.
if #KEYS ~= 5 or #ARGV ~= 3 then
  return redis.error_reply('ERR bank_report: wants 5 keys and 3 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local c = redis.call('HMGET', KEYS[1], 'env', 'account', 'rec_at', 'rec_ok_ms', 'api_url',
  'created_ms', 'api_at')
if c[1] ~= ARGV[1] or (ARGV[2] ~= '' and c[2] ~= ARGV[2]) then return {} end
for j = 3, 7 do c[j] = c[j] or '' end
local most = tonumber(ARGV[3])
return {c, redis.call('HGETALL', KEYS[2]),
  redis.call('LRANGE', KEYS[3], 0, most - 1), redis.call('LLEN', KEYS[3]),
  redis.call('ZRANGE', KEYS[4], 0, -1),
  redis.call('LRANGE', KEYS[5], 0, most - 1), redis.call('LLEN', KEYS[5])}
