-- transfer: move money between two accounts of the caller's group, once.
-- KEYS[1] = <prefix>{<env>}:pixkeys   hash Pix key -> account id
-- KEYS[2] = <prefix>{<env>}:outbox
-- ARGV = from_key, to_key, amount, caller account, now_ms, now text,
--        account key prefix, members key prefix, ledger key prefix,
--        idempotency key ('' = none), request fingerprint, event id (source),
--        event id (destination), transfer id
-- All derived keys share the {<env>} tag.
-- Returns {'ok'} | {'replayed'} | {'idem_conflict'} | {'not_found', 'from_key'|'to_key'}
--   | {'forbidden'} | {'same'} | {'insufficient', balance}
if #KEYS ~= 2 or #ARGV ~= 14 then
  return redis.error_reply('ERR transfer: wants 2 keys and 14 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local amount = tonumber(ARGV[3])
local caller, now = ARGV[4], ARGV[5]
if ARGV[10] ~= '' then
  local prior = redis.call('GET', ARGV[10])
  if prior then
    if prior == ARGV[11] then return {'replayed'} end
    return {'idem_conflict'}
  end
end
local from = redis.call('HGET', KEYS[1], ARGV[1])
if not from then return {'not_found', 'from_key'} end
local to = redis.call('HGET', KEYS[1], ARGV[2])
if not to then return {'not_found', 'to_key'} end
-- the spec's group: the caller itself, or an account sharing a member with it
local function in_group(acct)
  if acct == caller then return true end
  return redis.call('SINTERCARD', 2, ARGV[8] .. caller, ARGV[8] .. acct, 'LIMIT', 1) > 0
end
if not in_group(from) or not in_group(to) then return {'forbidden'} end
if from == to then return {'same'} end
local fk, tk = ARGV[7] .. from, ARGV[7] .. to
local bal = tonumber(redis.call('HGET', fk, 'balance') or '0')
if bal < amount then return {'insufficient', tostring(bal)} end
local fb = redis.call('HINCRBY', fk, 'balance', -amount)
local tb = redis.call('HINCRBY', tk, 'balance', amount)
local function ledger(acct, delta, balance, other)
  local lk = ARGV[9] .. acct
  redis.call('LPUSH', lk, cjson.encode({at = tonumber(now), amount = delta, balance = balance,
    kind = 'internal_transfer', transfer = ARGV[14], counterparty = other}))
  redis.call('LTRIM', lk, 0, 999)
end
ledger(from, -amount, fb, to)
ledger(to, amount, tb, from)
-- a postback to each side that has a postbackUrl
local function notify(acct, evt, direction)
  local url = redis.call('HGET', ARGV[7] .. acct, 'postback_url') or ''
  if url == '' then return end
  local data = '{"id":"' .. ARGV[14] .. '","amount":' .. ARGV[3] .. ',"status":"DONE","direction":"' ..
    direction .. '","from_key":' .. cjson.encode(ARGV[1]) .. ',"to_key":' .. cjson.encode(ARGV[2]) ..
    ',"fromAccount":"' .. from .. '","toAccount":"' .. to .. '","createdAt":"' .. ARGV[6] .. '"}'
  local body = '{"id":"' .. evt .. '","event":"EVENT:TRANSFER_DONE","data":' .. data .. '}'
  redis.call('LPUSH', KEYS[2], cjson.encode({id = evt, type = 'EVENT:TRANSFER_DONE',
    account = acct, url = url, body = body, order = 'transfer:' .. acct, created = tonumber(now)}))
end
notify(from, ARGV[12], 'out')
notify(to, ARGV[13], 'in')
if ARGV[10] ~= '' then redis.call('SET', ARGV[10], ARGV[11], 'EX', 86400) end
return {'ok'}
