-- charge_transition: move a charge to a new status once, and record its event.
-- KEYS[1] = <prefix>{<env>}:ch:<id>            the charge
-- KEYS[2] = <prefix>{<env>}:outbox             events waiting to enter a delivery shard
-- KEYS[3] = <prefix>{<env>}:expiry             zset of pending charges by expiry
-- KEYS[4] = <prefix>{<env>}:ledger:            ledger key prefix: the account's ledger is
--           <prefix>{<env>}:ledger:<account> (list, newest first, same tag)
-- ARGV[1] = action: pay | expire | refund | fail
-- ARGV[2] = now (ms)   ARGV[3] = now as "YYYY-MM-DD HH:MM:SS"
-- ARGV[4] = event id   ARGV[5] = account key prefix (<prefix>{<env>}:acct:, same tag)
-- ARGV[6] = the account that asks ('' = any: the expiry scheduler)
-- ARGV[7] = dedupe key of this upstream notification ('' = none; same tag),
--           kept for ARGV[10] seconds
-- ARGV[8] = upstream notification id ('' = none)
-- ARGV[9] = the amount a refund names ('' = the charge's own)
-- ARGV[10] = how long an upstream notification id is remembered (seconds)
-- Returns {'ok', status, charge json, event id} | {'not_found'} |
--   {'refused', current status} | {'expired', charge json, event id} (a payment
--   that came after expiresAt: the charge was expired instead) |
--   {'duplicate', event id} | {'insufficient', balance} | {'amount_mismatch', amount}
if #KEYS ~= 4 or #ARGV ~= 10 then
  return redis.error_reply('ERR charge_transition: wants 4 keys and 10 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local now = tonumber(ARGV[2])
local action = ARGV[1]
if ARGV[7] ~= '' then
  local seen = redis.call('GET', ARGV[7])
  if seen then return {'duplicate', seen} end
end
local c = redis.call('HMGET', KEYS[1], 'status', 'account', 'expires_ms', 'head', 'mid',
  'amount', 'fee', 'postback_url', 'id')
if not c[1] then return {'not_found'} end
local status, account = c[1], c[2]
if ARGV[6] ~= '' and ARGV[6] ~= account then return {'not_found'} end

local to, event
if action == 'pay' then
  if status == 'PENDING' and now >= tonumber(c[3]) then
    action = 'expire_late'
  end
end
if action == 'pay' then
  to, event = 'PAID', 'EVENT:CHARGE_PAID'
elseif action == 'expire' or action == 'expire_late' then
  to, event = 'EXPIRED', 'EVENT:CHARGE_EXPIRED'
elseif action == 'refund' then
  to, event = 'REFUNDED', 'EVENT:CHARGE_REFUND'
elseif action == 'fail' then
  to, event = 'FAILED', nil
else
  return redis.error_reply('ERR unknown action')
end
local from = (to == 'REFUNDED') and 'PAID' or 'PENDING'
if status ~= from then return {'refused', status} end

if ARGV[9] ~= '' and ARGV[9] ~= c[6] then return {'amount_mismatch', c[6]} end
local net = tonumber(c[6]) - tonumber(c[7])
local acct_key = ARGV[5] .. account
if to == 'REFUNDED' then
  local bal = tonumber(redis.call('HGET', acct_key, 'balance') or '0')
  if bal < net then return {'insufficient', tostring(bal)} end
end

redis.call('HSET', KEYS[1], 'status', to, 'updated_at', ARGV[3], 'updated_ms', ARGV[2])
redis.call('ZREM', KEYS[3], c[9])
local json = c[4] .. to .. c[5] .. ARGV[3] .. '"}'

if to == 'PAID' or to == 'REFUNDED' then
  local delta = (to == 'PAID') and net or -net
  local bal = redis.call('HINCRBY', acct_key, 'balance', delta)
  redis.call('LPUSH', KEYS[4] .. account, cjson.encode({at = now, amount = delta, balance = bal,
    kind = (to == 'PAID') and 'charge_paid' or 'charge_refunded', charge = c[9]}))
  redis.call('LTRIM', KEYS[4] .. account, 0, 999)
end

if not event then return {'ok', to, json, ''} end
local url = c[8]
if url == '' then url = redis.call('HGET', acct_key, 'postback_url') or '' end
local body = '{"id":"' .. ARGV[4] .. '","event":"' .. event .. '","data":' .. json .. '}'
redis.call('LPUSH', KEYS[2], cjson.encode({id = ARGV[4], type = event, account = account,
  url = url, body = body, order = c[9], created = now}))
if ARGV[7] ~= '' then redis.call('SET', ARGV[7], ARGV[4], 'EX', ARGV[10]) end
if action == 'expire_late' then return {'expired', json, ARGV[4]} end
return {'ok', to, json, ARGV[4]}
