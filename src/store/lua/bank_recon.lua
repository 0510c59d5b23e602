-- bank_recon: the schedule of the reconciliations of the bank connections of one
-- environment (docs/bank-api.md, "Reconciliation"): which is due, which a process is running,
-- when each last succeeded.
--   KEYS[1] = <prefix>{<env>}:bankrec  zset: connection -> when its next reconciliation is
--             due, or while one runs, when its lease runs out (ms)
--   KEYS[2] = <prefix>{<env>}:bankok   zset: connection -> when its last reconciliation
--             succeeded (ms; when it was scheduled, before the first)
-- ARGV[1] = action, ARGV[2] = now (ms), then:
--   claim  most, lease (ms): lease up to `most` due connections (their score becomes
--          now + lease, so no other process takes them meanwhile). Returns {the oldest
--          success of any connection (ms, '' when none), leased ids...}
--   next   id, when (ms), ok (1 | 0): the run of id is over; its next one is due at `when`
--          (also to renew a lease); with ok its success is recorded. Nothing for a
--          connection no longer scheduled. Returns 1, or 0 when it was not.
--   add    id: schedule id now (its API credentials were given); its success clock starts
--          now unless it ran before. Returns 1.
--   drop   id: no more reconciliations (disconnected, credentials gone). Returns 1.
if #KEYS ~= 2 or #ARGV < 3 then
  return redis.error_reply('ERR bank_recon: wants 2 keys and 3 + ... arguments')
end
local action, now = ARGV[1], tonumber(ARGV[2])
if action == 'claim' then
  local most, lease = tonumber(ARGV[3]), tonumber(ARGV[4])
  local out = {''}
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if oldest[2] then out[1] = oldest[2] end
  if most > 0 then
    local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, most)
    for _, id in ipairs(due) do
      redis.call('ZADD', KEYS[1], now + lease, id)
      out[#out + 1] = id
    end
  end
  return out
elseif action == 'next' then
  if not redis.call('ZSCORE', KEYS[1], ARGV[3]) then return 0 end
  redis.call('ZADD', KEYS[1], tonumber(ARGV[4]), ARGV[3])
  if ARGV[5] == '1' then redis.call('ZADD', KEYS[2], now, ARGV[3]) end
  return 1
elseif action == 'add' then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('ZADD', KEYS[2], 'NX', now, ARGV[3])
  return 1
elseif action == 'drop' then
  redis.call('ZREM', KEYS[1], ARGV[3])
  redis.call('ZREM', KEYS[2], ARGV[3])
  return 1
end
return redis.error_reply('ERR bank_recon: unknown action ' .. tostring(action))
