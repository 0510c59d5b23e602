-- bank_pix: Pix that banks reported (an API Pix webhook, or a reconciliation's page) for the
-- bank connections of one shard, each once per connection and endToEndId, each refund once
-- per connection, endToEndId, refund id and status, and the items a bank sent that failed
-- the standard's schema, all in one durable write (docs/banks.md says what each outcome
-- means to the merchant). A process gathers the Pix that arrive during one turn of its loop
-- into one call per shard.
--   p bpix:<conn>:<e2e>          string "<outcome> <reason> <event id>": the Pix was heard
--   p bdev:<conn>:<e2e>:<id>:<status>  string: that refund status was heard
--   p blog:<conn>                list: what the connection heard, newest first (1,000 kept)
--   p bday:<conn>:<YYYY-MM-DD>   hash: counts by source and outcome, per day of horario
--                                (Brasilia time), and cents by source (<source>_cents)
--                                (a reconciliation reading a Pix already taken again is
--                                neither counted nor logged: its windows overlap)
--   p brec:<conn>:<YYYY-MM-DD>   list: the endToEndIds a reconciliation took first (the
--                                webhook had not brought them), the first 10,000
-- all kept for the retention; a charge paid by a Pix keeps it in fields pix (JSON) and pix_e2e.
-- KEYS[1] = <prefix>{s<k>}:bank   (names the shard; not written)
-- ARGV = shard key prefix, now (ms), now as text, retention (seconds), number n of Pix,
--        number m of refused items, then n Pix, each 15 + 5r:
--          connection, account, env, source (webhook | reconciliation), day, endToEndId,
--          txid ('' = none), charge id the txid names ('' = none), cents, horario (ms),
--          Pix as JSON, what a charge it pays keeps (JSON), event id, cents refunded
--          (DEVOLVIDO, all refunds of the Pix), number r of refunds, then r times: refund id,
--          status, cents, event id, refund as JSON;
--        then m refused items, each 6: connection, source, day, index, endToEndId ('' =
--          unreadable), error.
-- Returns, per Pix in order, 4 + 2r elements: outcome (paid | unmatched | duplicate),
-- reason ('' | heard_late | amount_mismatch | charge_expired | charge_paid |
-- charge_refunded | charge_failed | unknown_txid | no_txid; for a duplicate, the first
-- outcome's), event id ('' when none), charge id ('' when none); then per refund: outcome
-- (refunded | included | reported | duplicate), event id ('' when none).
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV < 6 then
  return redis.error_reply('ERR bank_pix: wants 1 keys and 6 + ... arguments')
end
local p, now, now_txt, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local n, m = tonumber(ARGV[5]), tonumber(ARGV[6])
local out = {}
local logs = {} -- connection -> entries, oldest first
local days = {} -- bday key -> true
local accounts = {}

-- A log entry from names and values in the order given ('' = null), "at" first.
local function log(conn, fields)
  local l = logs[conn]
  if not l then
    l = {}
    logs[conn] = l
  end
  local parts = {'"at":' .. now}
  for j = 1, #fields, 2 do
    local v = fields[j + 1]
    parts[#parts + 1] = '"' .. fields[j] .. '":' .. ((v == '') and 'null' or cjson.encode(v))
  end
  l[#l + 1] = '{' .. table.concat(parts, ',') .. '}'
end

local function count(conn, day, field)
  local k = p .. 'bday:' .. conn .. ':' .. day
  redis.call('HINCRBY', k, field, 1)
  days[k] = true
end

local function account_url(env, account)
  local ak = p .. 'acct:' .. env .. ':' .. account
  local url = accounts[ak]
  if not url then
    url = redis.call('HGET', ak, 'postback_url') or ''
    accounts[ak] = url
  end
  return url
end

-- The charge's JSON as it stands (c: the HMGET below).
local function charge_json(c)
  local j = c[4] .. c[1] .. c[5] .. c[11]
  if c[10] and c[10] ~= '' then return j .. '","pix":' .. c[10] .. '}' end
  return j .. '"}'
end

-- An event about a Pix or a refund that moves no charge: to the charge's postbackUrl when it
-- names one of this account's charges that has one, else to the account's.
local function pix_event(etype, evt, env, account, c, cid, conn, e2e, data)
  local url = c and c[8] or ''
  if url == '' then url = account_url(env, account) end
  local body = '{"id":"' .. evt .. '","event":"' .. etype .. '","data":' .. data .. '}'
  event_write(p, evt, env, account, etype, url, body, c and cid or ('pix:' .. conn .. ':' .. e2e),
    now, ttl)
end

local i = 7
due_batch()
for _ = 1, n do
  local conn, account, env, source, day = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local e2e, txid, cid, cents = ARGV[i + 5], ARGV[i + 6], ARGV[i + 7], tonumber(ARGV[i + 8])
  local horario, pix, keep, evt = tonumber(ARGV[i + 9]), ARGV[i + 10], ARGV[i + 11], ARGV[i + 12]
  local refunded, r = tonumber(ARGV[i + 13]), tonumber(ARGV[i + 14])
  local ck = p .. 'ch:' .. cid
  local c = nil
  if cid ~= '' then
    c = redis.call('HMGET', ck, 'status', 'account', 'expires_ms', 'head', 'mid', 'amount', 'fee',
      'postback_url', 'env', 'pix', 'updated_at', 'pix_e2e')
    if not c[1] or c[2] ~= account or c[9] ~= env then c = nil end
  end

  -- the payment, once
  local outcome, reason, event = 'unmatched', '', ''
  local dk = p .. 'bpix:' .. conn .. ':' .. e2e
  local seen = redis.call('SET', dk, '', 'NX', 'GET', 'EX', ttl)
  -- a reconciliation reads again what it or the webhook took (its window overlaps the last
  -- by 10 minutes): no news, so not counted or logged as a duplicate; a bank's webhook
  -- that repeats itself, or comes after the reconciliation took its Pix, is
  local reread = seen and source == 'reconciliation'
  if seen then
    outcome = 'duplicate'
    local a, b, e = string.match(seen, '^(%S*) (%S*) (%S*)$')
    reason, event = b or '', e or ''
    if not reread then count(conn, day, 'duplicate') end
  else
    if not c then
      reason = (txid == '') and 'no_txid' or 'unknown_txid'
    elseif c[1] == 'PENDING' or c[1] == 'EXPIRED' then
      if tonumber(c[6]) ~= cents then
        reason = 'amount_mismatch'
      elseif horario > tonumber(c[3]) then
        reason = 'charge_expired'
      else
        -- paid in time by the bank's clock, even when heard after the charge expired
        if c[1] == 'EXPIRED' then reason = 'heard_late' end
        charge_apply(p, cid, c, 'PAID', 'EVENT:CHARGE_PAID', now, now_txt, evt, ttl, keep, e2e)
        outcome, event = 'paid', evt
        c[1], c[10], c[11], c[12] = 'PAID', keep, now_txt, e2e
      end
    else
      reason = 'charge_' .. string.lower(c[1])
    end
    if outcome == 'unmatched' then
      pix_event('EVENT:PIX_UNMATCHED', evt, env, account, c, cid, conn, e2e,
        '{"reason":"' .. reason .. '","connection":"' .. conn .. '","source":"' .. source ..
        '","pix":' .. pix .. ',"charge":' .. (c and charge_json(c) or 'null') .. '}')
      event = evt
    end
    redis.call('SET', dk, outcome .. ' ' .. reason .. ' ' .. event, 'EX', ttl)
    count(conn, day, source)
    count(conn, day, outcome == 'paid' and 'paid' or reason)
    redis.call('HINCRBY', p .. 'bday:' .. conn .. ':' .. day, source .. '_cents', cents)
    if source == 'reconciliation' then
      -- the proof of what the bank's webhook missed: which Pix, per day
      local rk = p .. 'brec:' .. conn .. ':' .. day
      if redis.call('RPUSH', rk, e2e) > 10000 then redis.call('LTRIM', rk, 0, 9999) end
      redis.call('EXPIRE', rk, ttl)
    end
  end
  if not reread then
    log(conn, {'source', source, 'endToEndId', e2e, 'txid', txid, 'amount', cents,
      'outcome', outcome, 'reason', reason, 'charge', c and cid or '', 'event', event})
  end
  out[#out + 1] = outcome
  out[#out + 1] = reason
  out[#out + 1] = event
  out[#out + 1] = c and cid or ''

  -- its refunds, each status once
  local whole = false
  i = i + 15
  for _ = 1, r do
    local rid, status, rcents, revt, rjson = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]),
      ARGV[i + 3], ARGV[i + 4]
    local rk = p .. 'bdev:' .. conn .. ':' .. e2e .. ':' .. rid .. ':' .. status
    local routcome, rev = 'reported', ''
    if redis.call('SET', rk, '1', 'NX', 'EX', ttl) == false then
      routcome = 'duplicate'
    elseif status == 'DEVOLVIDO' and refunded >= cents and whole then
      routcome = 'included'
    elseif status == 'DEVOLVIDO' and refunded >= cents and c and c[1] == 'PAID' and c[12] == e2e then
      -- the whole Pix that paid this charge went back: the charge is refunded (the bank
      -- says it happened, so no balance check), with its one event
      charge_apply(p, cid, c, 'REFUNDED', 'EVENT:CHARGE_REFUND', now, now_txt, revt, ttl, keep, e2e)
      c[1], c[10], c[11] = 'REFUNDED', keep, now_txt
      routcome, rev, whole = 'refunded', revt, true
    else
      pix_event('EVENT:PIX_REFUND', revt, env, account, c, cid, conn, e2e,
        '{"status":"' .. status .. '","connection":"' .. conn .. '","source":"' .. source ..
        '","refund":' .. rjson .. ',"pix":' .. pix .. ',"charge":' ..
        (c and charge_json(c) or 'null') .. '}')
      rev = revt
    end
    if routcome ~= 'duplicate' then count(conn, day, 'refund_' .. string.lower(status)) end
    if routcome ~= 'duplicate' or source ~= 'reconciliation' then
      log(conn, {'source', source, 'endToEndId', e2e, 'refund', rid, 'status', status,
        'amount', rcents, 'outcome', routcome, 'charge', c and cid or '', 'event', rev})
    end
    out[#out + 1] = routcome
    out[#out + 1] = rev
    i = i + 5
  end
end

for _ = 1, m do
  local conn, source, day, index, e2e, err = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3],
    ARGV[i + 4], ARGV[i + 5]
  count(conn, day, 'refused')
  log(conn, {'source', source, 'index', tonumber(index), 'endToEndId', e2e,
    'outcome', 'refused', 'error', err})
  i = i + 6
end
due_flush(p)

for conn, l in pairs(logs) do
  local lk = p .. 'blog:' .. conn
  for j = 1, #l, 500 do
    redis.call('LPUSH', lk, unpack(l, j, math.min(j + 499, #l)))
  end
  redis.call('LTRIM', lk, 0, 999)
  redis.call('EXPIRE', lk, ttl)
end
for k in pairs(days) do redis.call('EXPIRE', k, ttl) end
return out
