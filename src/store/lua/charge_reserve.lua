-- charge_reserve: the id of a charge about to be created at the account's bank, for its
-- externalID: the charge made already (as charge_create answers it), or the id reserved by
-- an earlier attempt of the same request that the bank did not answer (a retry puts the
-- same txid: PUT /cob is idempotent by txid), or the new id given, reserved now.
-- KEYS[1] = <prefix>{s<k>}:ext:<account>    hash externalID -> "<id> <fingerprint>"
-- KEYS[2] = <prefix>{s<k>}:cres:<account>   hash externalID -> "<id> <fingerprint> <until>"
-- ARGV = externalID, fingerprint, new id, now (ms), until (ms: when a reservation is
--        forgotten), charge key prefix (<prefix>{s<k>}:ch:)
-- Returns {'existing', head, status, mid, updated_at, pix} for the same request again,
-- {'conflict', id} for another request with a used externalID, {'reserved', id}.
if #KEYS ~= 2 or #ARGV ~= 6 then
  return redis.error_reply('ERR charge_reserve: wants 2 keys and 6 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local prior = redis.call('HGET', KEYS[1], ARGV[1])
if prior then
  local sp = string.find(prior, ' ', 1, true)
  local id, fp = string.sub(prior, 1, sp - 1), string.sub(prior, sp + 1)
  if fp ~= ARGV[2] then return {'conflict', id} end
  local c = redis.call('HMGET', ARGV[6] .. id, 'head', 'status', 'mid', 'updated_at', 'pix')
  return {'existing', c[1], c[2], c[3], c[4], c[5] or ''}
end
local held = redis.call('HGET', KEYS[2], ARGV[1])
if held then
  local id, fp, untl = string.match(held, '^(%S+) (%S+) (%d+)$')
  if id and tonumber(untl) > tonumber(ARGV[4]) then
    if fp ~= ARGV[2] then return {'conflict', id} end
    return {'reserved', id}
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. ' ' .. ARGV[2] .. ' ' .. ARGV[5])
return {'reserved', ARGV[3]}
