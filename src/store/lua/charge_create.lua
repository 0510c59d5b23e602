-- charge_create: store a new PENDING charge, or answer for its externalID.
-- KEYS[1] = <prefix>{s<k>}:ch:<id>            the charge (in its account's shard)
-- KEYS[2] = <prefix>{s<k>}:ext:<account>       hash externalID -> "<id> <fingerprint>"
-- KEYS[3] = <prefix>{s<k>}:expiry              zset charge id -> expires_ms
-- KEYS[4] = <prefix>{s<k>}:charges:<account>   zset charge id -> created_ms
-- ARGV = id, account, env, externalID ('' = none), fingerprint, head, mid,
--        created_ms, expires_ms, updated_at (text), amount, fee, postbackUrl, brCode,
--        charge key prefix (<prefix>{s<k>}:ch:, same hash tag, to read an earlier charge),
--        the account's reservations (<prefix>{s<k>}:cres:<account>, '' = none: a charge
--        created at the bank clears its externalID's reservation), and for a charge with a
--        due date the least and the most cents a Pix may pay it with ('' '' otherwise: kept
--        as due_min and due_max, which bank_pix reads); then, for a recurring charge of Pix
--        Automático only, its recurrence's id, its idRec and its bank connection: kept on the
--        charge (recurrence, idrec, cobr_conn) and the charge put in the connection's
--        p cobropen:<connection> (zset: recurring charges not final, scored by when the
--        reconciliation last asked about them; p the shard key prefix, ARGV[15] less 'ch:'),
--        and in p recch:<account>:<recurrence> (zset: the recurrence's charges by creation)
-- Returns {'created'}, {'existing', head, status, mid, updated_at, pix ('' = none)} for the same
-- request again, or {'conflict', id} for another request with a used externalID.
if #KEYS ~= 4 or (#ARGV ~= 18 and #ARGV ~= 21) then
  return redis.error_reply('ERR charge_create: wants 4 keys and 18 or 21 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
if ARGV[4] ~= '' then
  local prior = redis.call('HGET', KEYS[2], ARGV[4])
  if prior then
    local sp = string.find(prior, ' ', 1, true)
    local id, fp = string.sub(prior, 1, sp - 1), string.sub(prior, sp + 1)
    if fp ~= ARGV[5] then
      return {'conflict', id}
    end
    local c = redis.call('HMGET', ARGV[15] .. id, 'head', 'status', 'mid', 'updated_at', 'pix')
    return {'existing', c[1], c[2], c[3], c[4], c[5] or ''}
  end
  redis.call('HSET', KEYS[2], ARGV[4], ARGV[1] .. ' ' .. ARGV[5])
  if ARGV[16] ~= '' then redis.call('HDEL', ARGV[16], ARGV[4]) end
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'account', ARGV[2], 'env', ARGV[3],
  'external_id', ARGV[4], 'head', ARGV[6], 'mid', ARGV[7], 'status', 'PENDING',
  'created_ms', ARGV[8], 'expires_ms', ARGV[9], 'updated_at', ARGV[10],
  'updated_ms', ARGV[8], 'amount', ARGV[11], 'fee', ARGV[12], 'postback_url', ARGV[13],
  'br_code', ARGV[14])
if ARGV[18] ~= '' then redis.call('HSET', KEYS[1], 'due_min', ARGV[17], 'due_max', ARGV[18]) end
if #ARGV == 21 then
  redis.call('HSET', KEYS[1], 'recurrence', ARGV[19], 'idrec', ARGV[20], 'cobr_conn', ARGV[21],
    'cobr_status', 'CRIADA')
  local p = string.sub(ARGV[15], 1, -4)
  redis.call('ZADD', p .. 'cobropen:' .. ARGV[21], ARGV[8], ARGV[1])
  redis.call('ZADD', p .. 'recch:' .. ARGV[2] .. ':' .. ARGV[19], ARGV[8], ARGV[1])
end
redis.call('ZADD', KEYS[3], ARGV[9], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[8], ARGV[1])
return {'created'}
