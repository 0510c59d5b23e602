-- bank_recon: the schedule of the reconciliations of the bank connections of one shard
-- (docs/bank-api.md, "Reconciliation"): which is due, which a process is running, when each
-- last succeeded, and what a run needs of each connection it leases.
--   KEYS[1] = <prefix>{s<k>}:bankrec  zset: connection -> when its next reconciliation is
--             due, or while one runs, when its lease runs out (ms)
--   KEYS[2] = <prefix>{s<k>}:bankok:sandbox, KEYS[3] = <prefix>{s<k>}:bankok:production
--             zsets: connection -> when its last reconciliation succeeded (ms; when it
--             was scheduled, before the first)
-- Derives from the shard key prefix: bank:<id> (the connection, read) and bref:<id> (its
-- pending refunds, read).
-- ARGV[1] = action, ARGV[2] = now (ms), ARGV[3] = the shard key prefix (<prefix>{s<k>}:),
-- then:
--   claim  most, lease (ms), refunds: lease up to `most` due connections (their score
--          becomes now + lease, so no other process takes them meanwhile); one that is
--          gone or has no API credentials any more leaves the schedule instead.
--          Returns {the oldest success in sandbox (ms, '' none), in production, then per
--          leased connection its RUN fields}
--   read   id, refunds: a connection's RUN fields whatever its schedule, leasing nothing
--          (a run asked for). Returns {'', '', its fields}, or {'', ''} when it is gone.
--   renew  id, until (ms): a live run's lease, again. Nothing for a connection no longer
--          scheduled. Returns 1, or 0 when it was not.
--   add    id, env: schedule id now (its API credentials were given, or a run was asked
--          for); its success clock starts now unless it ran before. Returns 1.
-- The RUN fields of a connection (19; '' where the record has none): id, account, env,
-- Pix key, created (ms), API credentials given (ms), reconciled up to (ms), consecutive
-- failures, API URL, token URL, client id, sealed client secret, certificate, sealed
-- private key, the bank's CA, scopes, sealed extra headers, sealed extra query, its
-- provider ('' api-pix) and sealed API token (a provider's connection), and its
-- oldest `refunds` pending refunds ("<endToEndId> <refund id>", joined by newlines).
if #KEYS ~= 3 or #ARGV < 4 then
  return redis.error_reply('ERR bank_recon: wants 3 keys and 4 + ... arguments')
end
local action, now, p = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local function run_fields(out, id, refunds)
  local f = redis.call('HMGET', p .. 'bank:' .. id, 'id', 'account', 'env', 'pix_key',
    'created_ms', 'api_at', 'rec_at', 'rec_fail', 'api_url', 'token_url', 'client_id',
    'client_secret', 'cert', 'key', 'bank_ca', 'api_scope', 'api_headers', 'api_query',
    'provider', 'api_token')
  if f[1] ~= id then return false end
  for j = 1, 20 do out[#out + 1] = f[j] or '' end
  local pending = {}
  if refunds > 0 then pending = redis.call('ZRANGE', p .. 'bref:' .. id, 0, refunds - 1) end
  out[#out + 1] = table.concat(pending, '\n')
  return f[9] and f[9] ~= ''
end

if action == 'claim' then
  local most, lease, refunds = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local out = {'', ''}
  for j = 1, 2 do
    local oldest = redis.call('ZRANGE', KEYS[1 + j], 0, 0, 'WITHSCORES')
    if oldest[2] then out[j] = oldest[2] end
  end
  if most > 0 then
    local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, most)
    for _, id in ipairs(due) do
      local n = #out
      if run_fields(out, id, refunds) then
        redis.call('ZADD', KEYS[1], now + lease, id)
      else
        -- disconnected, or its credentials gone: nothing to reconcile
        for j = #out, n + 1, -1 do out[j] = nil end
        redis.call('ZREM', KEYS[1], id)
        redis.call('ZREM', KEYS[2], id)
        redis.call('ZREM', KEYS[3], id)
      end
    end
  end
  return out
elseif action == 'read' then
  local out = {'', ''}
  run_fields(out, ARGV[4], tonumber(ARGV[5]))
  return out
elseif action == 'renew' then
  if not redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 0 end
  redis.call('ZADD', KEYS[1], tonumber(ARGV[5]), ARGV[4])
  return 1
elseif action == 'add' then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('ZADD', ARGV[5] == 'production' and KEYS[3] or KEYS[2], 'NX', now, ARGV[4])
  return 1
end
return redis.error_reply('ERR bank_recon: unknown action ' .. tostring(action))
