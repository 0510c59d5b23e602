-- bank_pix: what banks reported (an API Pix webhook, or a reconciliation's page) through the
-- bank connections of one shard, in one durable write (docs/banks.md says what each outcome
-- means to the merchant). A process gathers the Pix that arrive during one turn of its loop
-- into one call per shard. One Pix, one truth, per account: a Pix is taken once per
-- environment, account and endToEndId, whichever connection and source (webhook,
-- reconciliation) brings it first; that connection owns it, and only through it are its
-- refunds taken (once it is disconnected, the next connection that reports the Pix owns
-- it). Another connection that reports it moves nothing and makes no event; its report
-- says that another connection held it.
--   p bown:<env>:<account>:<e2e>  string "<outcome> <reason> <event id> <owner> [<conn> ...]":
--                               the Pix was taken by connection <owner>; the connections
--                               that reported it since follow (once forgotten, the Pix
--                               that paid a charge is known again by the charge's pix_e2e)
--   p bpix:<conn>:<e2e>         string "<outcome> <reason> <event id>": what the previous
--                               layout kept per connection, read (not written) so that a Pix
--                               taken before an upgrade stays taken
--   p banks:<account>           zset (read): the account's connections, for those keys
--   p bank:<conn>               hash (read): whether a connection is still there
--   p brefused:<env>:<account>:<id>  string "<event id> <conn> [<conn> ...]": an item the schema
--                               refused, reported once (id: its endToEndId when well-formed,
--                               else the SHA-256 of the item)
--   p bdev:<conn>:<e2e>:<id>:<status>  string: that refund status was taken (by the owner;
--                               those of the owners before it are read too)
--   p blog:<conn>                list: what the connection heard, newest first (1,000 kept)
--   p bday:<conn>:<YYYY-MM-DD>   hash: counts per day of horario (Brasilia time; a refused
--                               item without a readable horario: the day it came): by source
--                               (webhook, reconciliation) and outcome, duplicate, elsewhere,
--                               refused, refund_<status>, med_<status>, nature_<natureza of a MED refund>,
--                               due_paid (charges with a due date paid); cents: <source>_cents,
--                               refused_cents, med_cents (MED refunds DEVOLVIDO), due_paid_cents.
--                               A reconciliation reading again what was taken is neither
--                               counted nor logged (its windows overlap).
--   p brec:<conn>:<YYYY-MM-DD>   list: the Pix a reconciliation took first (the webhook had
--                               not brought them), the first 10,000, each "<endToEndId>
--                               <txid> <charge id> <event id> <cents>" ('-' for none; an
--                               entry of an earlier version is the endToEndId alone)
--   p bels:<conn>:<YYYY-MM-DD>   list: "<e2e> <owner>" of the Pix this connection reported
--                               that another connection held, the first 10,000
--   p ch:<id>, p acct:<env>:<account>  the charge a Pix pays and its account (lib/transition)
-- all kept for the retention; a charge paid by a Pix keeps it in fields pix (JSON) and pix_e2e.
-- KEYS[1] = <prefix>{s<k>}:bank   (names the shard; not written)
-- ARGV = shard key prefix, now (ms), now as text, retention (seconds), number n of Pix,
--        number m of refused items, then n Pix, each 16 + 8r:
--          connection, account, env, source (webhook | reconciliation), day, endToEndId,
--          txid ('' = none), charge id the txid names ('' = none), cents, horario (ms),
--          Pix as JSON, what a charge it pays keeps (JSON), event id, cents refunded
--          (DEVOLVIDO, all refunds of the Pix), number r of refunds, componentesValor ('' =
--          none, '-' = not adding up to valor, else its original), then r times: refund id,
--          status, cents, event id, refund as JSON, natureza ('' = none), MED (1 | 0), a
--          second event id (the charge's refund, when a MED refund makes the Pix whole);
--        then m refused items, each 12: connection, account, env, source, day, index, id,
--          endToEndId ('' = not well-formed), cents ('' = unreadable), event id, reasons
--          (JSON array), the item (JSON); the first reason is the array's first.
-- Returns, per Pix in order, 5 + 3r elements: outcome (paid | unmatched | duplicate),
-- reason ('' | heard_late | amount_mismatch | charge_expired | charge_paid |
-- charge_refunded | charge_failed | unknown_txid | no_txid; for a duplicate, the first
-- outcome's), event id ('' when none), charge id ('' when none), the connection that holds
-- the Pix when another does ('' otherwise); then per refund: outcome (refunded | included |
-- reported | med | duplicate | elsewhere), event id ('' when none), the charge's refund event
-- id of a MED refund that made the Pix whole (''); then per refused item 2: outcome (refused |
-- duplicate), event id.
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV < 6 then
  return redis.error_reply('ERR bank_pix: wants 1 keys and 6 + ... arguments')
end
local p, now, now_txt, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local n, m = tonumber(ARGV[5]), tonumber(ARGV[6])
local out = {}
local logs = {} -- connection -> entries, oldest first
local expiring = {} -- keys to give the retention once -> true

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

local function day_key(conn, day)
  local k = p .. 'bday:' .. conn .. ':' .. day
  expiring[k] = true
  return k
end

local function count(conn, day, field, by)
  redis.call('HINCRBY', day_key(conn, day), field, by or 1)
end

-- Append to a day's list of endToEndIds (the first 10,000 kept).
local function day_list(prefix, conn, day, item)
  local k = p .. prefix .. conn .. ':' .. day
  if redis.call('RPUSH', k, item) > 10000 then redis.call('LTRIM', k, 0, 9999) end
  expiring[k] = true
end

local function account_url(env, account)
  return account_info(p, env, account).url
end

-- The charge's JSON as it stands (c: the HMGET below).
local function charge_json(c)
  local j = c[4] .. c[1] .. c[5] .. c[11]
  if c[10] and c[10] ~= '' then return j .. '","pix":' .. c[10] .. '}' end
  return j .. '"}'
end

-- The connection through which the Pix that paid charge c came (its kept "pix" JSON
-- begins with it, after the refund's nature once the charge is refunded), or ''.
local function paid_through(c)
  local pix = c[10] or ''
  return string.match(pix, '^{"connection":"([^"]*)"') or
    string.match(pix, '^{"refundNature":"[^"]*","connection":"([^"]*)"') or ''
end

-- An event about a Pix or a refund that moves no charge: to the charge's postbackUrl when it
-- names one of this account's charges that has one, else to the account's; in the order
-- of the charge, or of the Pix (`order`).
local function pix_event(etype, evt, env, account, c, cid, order, data)
  local url = c and c[8] or ''
  if url == '' then url = account_url(env, account) end
  local body = '{"id":"' .. evt .. '","event":"' .. etype .. '","data":' .. data .. '}'
  event_write(p, evt, env, account, etype, url, body, c and cid or order, now, ttl)
end

-- Whether a Pix of `cents` pays the due-date charge c: never below the least it may be paid
-- with (the amount less its discount: parts that take off more, or an abatimento it does not
-- have, are not its terms); then its componentesValor (`parts`: its original, '' none, '-' not
-- adding up) add up and their original is the charge's amount, or without parts cents is at
-- most the most it may be paid with.
local function due_paid(c, cents, parts)
  if cents < tonumber(c[13]) then return false end
  if parts == '' then return cents <= tonumber(c[14]) end
  return parts ~= '-' and tonumber(parts) == tonumber(c[6])
end

-- Who holds what `key` ("<fields> <conn> [<conn> ...]", `nf` fields before the
-- connections) says, and whether `conn` is among them. When it is not, it is added.
local function holders(key, value, nf, conn)
  local parts = {}
  for w in string.gmatch(value, '%S+') do parts[#parts + 1] = w end
  -- an empty field ('' reason, '' event) leaves no word: the connections are the last ones
  local conns = {}
  for j = #parts, 1, -1 do
    if string.sub(parts[j], 1, 4) ~= 'bnk_' then break end
    table.insert(conns, 1, parts[j])
  end
  for _, c in ipairs(conns) do
    if c == conn then return conns[1], true end
  end
  redis.call('SET', key, value .. ' ' .. conn, 'KEEPTTL')
  return conns[1], false
end

-- What something taken before (a Pix, a refused item) heard again means to `conn`'s day:
-- once, for a connection that had not reported it (another one holds it); a repeat of its
-- bank's; or nothing, a reconciliation reading again what it heard (its windows overlap).
-- `what` names it in the day's list of what other connections held. Returns who holds it,
-- and whether the hearing is quiet (neither counted nor logged).
local function heard_again(key, value, nf, conn, day, source, what)
  local owner, heard = holders(key, value, nf, conn)
  if not heard then
    count(conn, day, 'elsewhere')
    day_list('bels:', conn, day, what .. ' ' .. owner)
  elseif source == 'reconciliation' then
    return owner, true
  else
    count(conn, day, 'duplicate')
  end
  return owner, false
end

-- Connection `conn` holds the Pix whose record is `key` from now on: first among the
-- connections that reported it (the one that held it was disconnected).
local function hold(key, conn)
  local v = redis.call('GET', key)
  local at = string.find(v, ' bnk_', 1, true)
  local rest = string.gsub(string.sub(v, at), ' ' .. conn, '', 1)
  redis.call('SET', key, string.sub(v, 1, at - 1) .. ' ' .. conn .. rest, 'KEEPTTL')
end

-- Whether bank connection `id` is gone (disconnected).
local function gone(id)
  return redis.call('EXISTS', p .. 'bank:' .. id) == 0
end

-- The previous layout's record of this Pix, kept per connection: "<o> <r> <e> <conn>", or nil.
-- That layout could take a Pix through two connections: the one it paid a charge through
-- (`through`, '' for none) is read first, then `conn`'s, then the others'.
local function legacy(account, conn, e2e, through)
  local ids = {through, conn}
  for _, other in ipairs(redis.call('ZRANGE', p .. 'banks:' .. account, 0, -1)) do
    ids[#ids + 1] = other
  end
  for _, id in ipairs(ids) do
    local v = id ~= '' and redis.call('GET', p .. 'bpix:' .. id .. ':' .. e2e)
    if v then return v .. ' ' .. id end
  end
  return nil
end

local i = 7
due_batch()
for _ = 1, n do
  local conn, account, env, source, day = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  local e2e, txid, cid, cents = ARGV[i + 5], ARGV[i + 6], ARGV[i + 7], tonumber(ARGV[i + 8])
  local horario, pix, keep, evt = tonumber(ARGV[i + 9]), ARGV[i + 10], ARGV[i + 11], ARGV[i + 12]
  local refunded, r, parts = tonumber(ARGV[i + 13]), tonumber(ARGV[i + 14]), ARGV[i + 15]
  local ck = p .. 'ch:' .. cid
  local c = nil
  if cid ~= '' then
    c = redis.call('HMGET', ck, 'status', 'account', 'expires_ms', 'head', 'mid', 'amount', 'fee',
      'postback_url', 'env', 'pix', 'updated_at', 'pix_e2e', 'due_min', 'due_max')
    if not c[1] or c[2] ~= account or c[9] ~= env then c = nil end
  end

  -- the payment, once per account
  local outcome, reason, event, owner = 'unmatched', '', '', conn
  local ok = p .. 'bown:' .. env .. ':' .. account .. ':' .. e2e
  local seen = redis.call('GET', ok)
  if not seen then
    local through = (c and c[12] == e2e) and paid_through(c) or ''
    seen = legacy(account, conn, e2e, through)
    if not seen and through ~= '' then
      -- the Pix that paid this charge, forgotten after the retention (a refund, a MED one
      -- above all, may come 90 days after it): taken, by the connection it came through
      seen = 'paid   ' .. through
    end
    if seen then redis.call('SET', ok, seen, 'EX', ttl) end
  end
  local quiet = false
  if seen then
    outcome = 'duplicate'
    local _, b, e = string.match(seen, '^(%S*) (%S*) (%S*)')
    reason, event = b or '', e or ''
    owner, quiet = heard_again(ok, seen, 3, conn, day, source, e2e)
    if owner ~= conn and gone(owner) then
      -- its holder was disconnected (its key connected again, say): the connection that
      -- reports it now holds it, so that its refunds are heard
      hold(ok, conn)
      owner = conn
    end
  else
    if not c then
      reason = (txid == '') and 'no_txid' or 'unknown_txid'
    elseif (c[1] == 'PENDING' or c[1] == 'EXPIRED') and c[14] then
      -- a charge with a due date: the bank computed what was due on the day paid, and took
      -- the Pix by its own calendar (an EXPIRED one included)
      if not due_paid(c, cents, parts) then
        reason = 'amount_mismatch'
      else
        if c[1] == 'EXPIRED' then reason = 'heard_late' end
        c.paid = cents
        charge_apply(p, cid, c, 'PAID', 'EVENT:CHARGE_PAID', now, now_txt, evt, ttl, keep, e2e)
        outcome, event = 'paid', evt
        c[1], c[10], c[11], c[12] = 'PAID', keep, now_txt, e2e
        count(conn, day, 'due_paid')
        count(conn, day, 'due_paid_cents', cents)
      end
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
      pix_event('EVENT:PIX_UNMATCHED', evt, env, account, c, cid, 'pix:' .. conn .. ':' .. e2e,
        '{"reason":"' .. reason .. '","connection":"' .. conn .. '","source":"' .. source ..
        '","pix":' .. pix .. ',"charge":' .. (c and charge_json(c) or 'null') .. '}')
      event = evt
    end
    redis.call('SET', ok, outcome .. ' ' .. reason .. ' ' .. event .. ' ' .. conn, 'EX', ttl)
    count(conn, day, source)
    count(conn, day, outcome == 'paid' and 'paid' or reason)
    count(conn, day, source .. '_cents', cents)
    if source == 'reconciliation' then
      -- the proof of what the bank's webhook missed: which Pix, per day
      day_list('brec:', conn, day, e2e .. ' ' .. (txid ~= '' and txid or '-') .. ' ' ..
        (c and cid or '-') .. ' ' .. (event ~= '' and event or '-') .. ' ' .. cents)
    end
  end
  local held = (owner ~= conn) and owner or ''
  if not quiet then
    log(conn, {'source', source, 'endToEndId', e2e, 'txid', txid, 'amount', cents,
      'outcome', outcome, 'reason', reason, 'heldBy', held, 'charge', c and cid or '',
      'event', event})
  end
  out[#out + 1] = outcome
  out[#out + 1] = reason
  out[#out + 1] = event
  out[#out + 1] = c and cid or ''
  out[#out + 1] = held

  -- its refunds, each status once, through the connection that holds the Pix only (those
  -- that held it before it took some)
  local whole, before = false, {}
  if r > 0 and held == '' then
    for w in string.gmatch(redis.call('GET', ok), ' (bnk_%S+)') do
      if w ~= conn then before[#before + 1] = w end
    end
  end
  i = i + 16
  for _ = 1, r do
    local rid, status, rcents, revt, rjson = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]),
      ARGV[i + 3], ARGV[i + 4]
    local nature, med, revt2 = ARGV[i + 5], ARGV[i + 6] == '1', ARGV[i + 7]
    local routcome, rev, rev2 = 'reported', '', ''
    -- the whole Pix that paid this charge went back, through the connection that took it
    local makes_whole = status == 'DEVOLVIDO' and refunded >= cents and c and c[1] == 'PAID' and
      c[12] == e2e and (paid_through(c) == conn or (paid_through(c) ~= '' and gone(paid_through(c))))
    local dk = ':' .. e2e .. ':' .. rid .. ':' .. status
    local taken = false
    for _, w in ipairs(before) do
      taken = taken or redis.call('EXISTS', p .. 'bdev:' .. w .. dk) == 1
    end
    if held ~= '' then
      routcome = 'elsewhere'
    elseif redis.call('SET', p .. 'bdev:' .. conn .. dk, '1', 'NX', 'EX', ttl) == false or taken then
      routcome = 'duplicate'
    else
      if med then
        -- money clawed back under a dispute: the merchant hears of each status
        pix_event('EVENT:PIX_MED_REFUND', revt, env, account, c, cid, 'pix:' .. conn .. ':' .. e2e,
          '{"nature":"' .. nature .. '","status":"' .. status .. '","connection":"' .. conn ..
          '","source":"' .. source .. '","refund":' .. rjson .. ',"pix":' .. pix ..
          ',"charge":' .. (c and charge_json(c) or 'null') .. '}')
        routcome, rev = 'med', revt
        count(conn, day, 'med_' .. string.lower(status))
        count(conn, day, 'nature_' .. nature)
        if status == 'DEVOLVIDO' then count(conn, day, 'med_cents', rcents) end
      end
      if status == 'DEVOLVIDO' and refunded >= cents and whole then
        if not med then routcome = 'included' end
      elseif makes_whole then
        -- the charge is refunded (the bank says it happened, so no balance check), with its
        -- one event, which says the nature of the refund that made it whole
        local k = '{"refundNature":"' .. (nature ~= '' and nature or 'ORIGINAL') .. '",' ..
          string.sub(keep, 2)
        local e = med and revt2 or revt
        charge_apply(p, cid, c, 'REFUNDED', 'EVENT:CHARGE_REFUND', now, now_txt, e, ttl, k, e2e)
        c[1], c[10], c[11] = 'REFUNDED', k, now_txt
        whole = true
        if med then rev2 = revt2 else routcome, rev = 'refunded', revt end
      elseif not med then
        pix_event('EVENT:PIX_REFUND', revt, env, account, c, cid, 'pix:' .. conn .. ':' .. e2e,
          '{"status":"' .. status .. '","connection":"' .. conn .. '","source":"' .. source ..
          '","refund":' .. rjson .. ',"pix":' .. pix .. ',"charge":' ..
          (c and charge_json(c) or 'null') .. '}')
        rev = revt
      end
      count(conn, day, 'refund_' .. string.lower(status))
    end
    if routcome ~= 'elsewhere' and (routcome ~= 'duplicate' or source ~= 'reconciliation') then
      log(conn, {'source', source, 'endToEndId', e2e, 'refund', rid, 'status', status,
        'nature', nature, 'amount', rcents, 'outcome', routcome, 'charge', c and cid or '',
        'event', rev ~= '' and rev or rev2})
    end
    out[#out + 1] = routcome
    out[#out + 1] = rev
    out[#out + 1] = rev2
    i = i + 8
  end
end

-- what the schema refused: the merchant hears of it once per account
for _ = 1, m do
  local conn, account, env, source, day, index = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3],
    ARGV[i + 4], tonumber(ARGV[i + 5])
  local id, e2e, cents, evt, reasons, item = ARGV[i + 6], ARGV[i + 7], ARGV[i + 8], ARGV[i + 9],
    ARGV[i + 10], ARGV[i + 11]
  local first = cjson.decode(reasons)[1] or ''
  local rk = p .. 'brefused:' .. env .. ':' .. account .. ':' .. id
  local seen = redis.call('SET', rk, evt .. ' ' .. conn, 'NX', 'GET', 'EX', ttl)
  local outcome, event, quiet = 'refused', evt, false
  if seen then
    outcome, event = 'duplicate', string.match(seen, '^(%S*)') or ''
    quiet = select(2, heard_again(rk, seen, 1, conn, day, source, e2e ~= '' and e2e or id))
  else
    pix_event('EVENT:PIX_REFUSED', evt, env, account, nil, '', 'pix:' .. conn .. ':' .. id,
      '{"connection":"' .. conn .. '","source":"' .. source .. '","endToEndId":' ..
      (e2e ~= '' and ('"' .. e2e .. '"') or 'null') .. ',"reasons":' .. reasons ..
      ',"item":' .. item .. '}')
    count(conn, day, 'refused')
    if cents ~= '' then count(conn, day, 'refused_cents', tonumber(cents)) end
  end
  if not quiet then
    log(conn, {'source', source, 'index', index, 'endToEndId', e2e, 'outcome', outcome,
      'error', first, 'event', event})
  end
  out[#out + 1] = outcome
  out[#out + 1] = event
  i = i + 12
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
for k in pairs(expiring) do redis.call('EXPIRE', k, ttl) end
return out
