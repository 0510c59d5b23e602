-- charge_apply: the change itself, once its checks passed: charge `cid` (its HMGET `c` of
-- status, account, expires_ms, head, mid, amount, fee, postback_url, env, pix, and for
-- the bank's Pix updated_at) becomes `to`,
-- out of the expiry set, its net amount credited (PAID) or debited (REFUNDED) with a
-- ledger entry (net: its amount less its fee; for a charge with a due date, `c.paid`, what
-- the bank received, less its fee, kept as the charge's paid_cents for its refund), and its
-- event `event` (nil: none) with id `evt` written. `pix` (nil or a
-- JSON object) is what a bank reported of the Pix that paid it, `e2e` its endToEndId:
-- kept on the charge and shown in its JSON (`"pix": {...}`). Returns the charge's JSON.
local function charge_apply(p, cid, c, to, event, now, now_txt, evt, ttl, pix, e2e)
  local ck = p .. 'ch:' .. cid
  local owner, env = c[2], c[9]
  local net = tonumber(c[6]) - tonumber(c[7])
  if to == 'PAID' and c.paid then
    -- a charge with a due date: what the bank received (fine and interest in, discount
    -- off), kept so that its refund takes back the same
    net = c.paid - tonumber(c[7])
    redis.call('HSET', ck, 'paid_cents', c.paid)
  elseif to == 'REFUNDED' then
    local paid = tonumber(redis.call('HGET', ck, 'paid_cents') or '')
    if paid then net = paid - tonumber(c[7]) end
  end
  local acct_key = p .. 'acct:' .. env .. ':' .. owner
  if pix then
    redis.call('HSET', ck, 'status', to, 'updated_at', now_txt, 'updated_ms', now, 'pix', pix,
      'pix_e2e', e2e)
  else
    redis.call('HSET', ck, 'status', to, 'updated_at', now_txt, 'updated_ms', now)
    pix = c[10]
  end
  redis.call('ZREM', p .. 'expiry', cid)
  local json = c[4] .. to .. c[5] .. now_txt
  if pix and pix ~= '' then
    json = json .. '","pix":' .. pix .. '}'
  else
    json = json .. '"}'
  end

  if to == 'PAID' or to == 'REFUNDED' then
    local delta = (to == 'PAID') and net or -net
    local bal = redis.call('HINCRBY', acct_key, 'balance', delta)
    local lk = p .. 'ledger:' .. owner
    redis.call('LPUSH', lk, cjson.encode({at = tonumber(now), amount = delta, balance = bal,
      kind = (to == 'PAID') and 'charge_paid' or 'charge_refunded', charge = cid}))
    redis.call('LTRIM', lk, 0, 999)
  end

  if not event then return json end
  -- its account's postbackUrl and endpoints read once per call (lib/event.lua)
  local url = c[8]
  if url == '' then url = account_info(p, env, owner).url end
  local body = '{"id":"' .. evt .. '","event":"' .. event .. '","data":' .. json .. '}'
  event_write(p, evt, env, owner, event, url, body, cid, now, ttl)
  return json
end

-- charge_move: move charge `cid` of shard prefix `p` by `action` (pay | expire | refund |
-- fail) once, with its balance change, ledger entry and event (id `evt`), all in the shard.
-- `account` ('' = any: the expiry scheduler) must own the charge; `amount` ('' = the
-- charge's own) must equal the charge's amount (a refund's, an ingested notification's
-- data.amount), checked once the status allows the move. A payment that comes after
-- expiresAt expires the charge instead.
-- Returns {'ok', status, charge json, event id ('' when none)} | {'not_found'} |
--   {'refused', current status} | {'expired', charge json, event id} |
--   {'insufficient', balance} | {'amount_mismatch', amount}
local function charge_move(p, cid, action, account, now, now_txt, evt, amount, ttl)
  local ck = p .. 'ch:' .. cid
  local c = redis.call('HMGET', ck, 'status', 'account', 'expires_ms', 'head', 'mid',
    'amount', 'fee', 'postback_url', 'env', 'pix', 'paid_cents')
  if not c[1] then return {'not_found'} end
  local status, owner, env = c[1], c[2], c[9]
  if account ~= '' and account ~= owner then return {'not_found'} end

  local to, event
  if action == 'pay' and status == 'PENDING' and tonumber(now) >= tonumber(c[3]) then
    action = 'expire_late'
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

  if amount ~= '' and amount ~= c[6] then return {'amount_mismatch', c[6]} end
  local net = tonumber(c[11] or c[6]) - tonumber(c[7])
  local acct_key = p .. 'acct:' .. env .. ':' .. owner
  if to == 'REFUNDED' then
    local bal = tonumber(redis.call('HGET', acct_key, 'balance') or '0')
    if bal < net then return {'insufficient', tostring(bal)} end
  end

  local json = charge_apply(p, cid, c, to, event, now, now_txt, evt, ttl, nil, nil)
  if not event then return {'ok', to, json, ''} end
  if action == 'expire_late' then return {'expired', json, evt} end
  return {'ok', to, json, evt}
end
