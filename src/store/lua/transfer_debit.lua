-- transfer_debit: take the money of an internal transfer from its source, once. When both
-- accounts share the shard the credit happens here too; otherwise the transfer is recorded
-- in the source's shard as debited, and transfer_credit (destination's shard) then
-- transfer_finish (here) complete it; a transfer left debited by a process that died is
-- completed by any dispatcher (it looks at xout).
-- KEYS[1] = <prefix>{s<k>}:acct:<env>:<from>   the source (its shard holds every other key)
-- ARGV = source shard prefix, 1 when the destination shares the shard, transfer id, amount,
--        from, to, from_key, to_key, now (ms), now as text, env, idempotency key ('' =
--        none), request fingerprint, event id (source), event id (destination), retention
-- Returns {'done'} | {'debited'} | {'replayed', transfer id} | {'idem_conflict'} |
--   {'insufficient', balance} | {'not_found'} (the source account is gone)
--@include event
--@include transfer
if #KEYS ~= 1 or #ARGV ~= 16 then
  return redis.error_reply('ERR transfer_debit: wants 1 keys and 16 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p = ARGV[1]
local t = {id = ARGV[3], amount = ARGV[4], from = ARGV[5], to = ARGV[6], from_key = ARGV[7],
  to_key = ARGV[8], at = ARGV[9], at_txt = ARGV[10], env = ARGV[11]}
local ttl = ARGV[16]
if ARGV[12] ~= '' then
  local prior = redis.call('GET', ARGV[12])
  if prior then
    local sp = string.find(prior, ' ', 1, true)
    if sp and string.sub(prior, 1, sp - 1) == ARGV[13] then
      return {'replayed', string.sub(prior, sp + 1)}
    end
    return {'idem_conflict'}
  end
end
local bal = redis.call('HGET', KEYS[1], 'balance')
if not bal then return {'not_found'} end
if tonumber(bal) < tonumber(t.amount) then return {'insufficient', bal} end
transfer_side(p, t, t.from, -tonumber(t.amount), ARGV[14], 'out', ttl)
if ARGV[12] ~= '' then redis.call('SET', ARGV[12], ARGV[13] .. ' ' .. t.id, 'EX', 86400) end
if ARGV[2] == '1' then
  transfer_side(p, t, t.to, tonumber(t.amount), ARGV[15], 'in', ttl)
  return {'done'}
end
redis.call('HSET', p .. 'xfer:' .. t.id, 'id', t.id, 'amount', t.amount, 'from', t.from,
  'to', t.to, 'from_key', t.from_key, 'to_key', t.to_key, 'at', t.at, 'at_txt', t.at_txt,
  'env', t.env, 'evt_in', ARGV[15], 'state', 'debited')
redis.call('ZADD', p .. 'xout', t.at, t.id)
return {'debited'}
