-- cobr_heard: what the bank said of a recurring charge of Pix Automático (its /cobr
-- callback, or the reconciliation's GET /cobr/{txid}), in one durable write with its events,
-- each once, in the charge's own lane (its id, docs/event-layout.md):
--   each attempt the payer's bank rejected (tentativa REJEITADA): EVENT:CHARGE_FAILED with
--     the attempt (date, type, the rejection's code); the charge stays PENDING;
--   each retry scheduled (a tentativa other than the first, AGND, SOLICITADA or AGENDADA):
--     EVENT:CHARGE_RETRY_SCHEDULED with its date;
--   the cobr EXPIRADA: the charge EXPIRED, EVENT:CHARGE_EXPIRED; REJEITADA or CANCELADA: the
--     charge FAILED, EVENT:CHARGE_FAILED with the closing code. CONCLUIDA is paid by its Pix
--     (the caller hands them to bank_pix, as a /pix callback's).
-- What was seen is kept on the charge (cobr_seen: "<date>:F" and "<date>:R" keys;
-- cobr_status: the bank's status), so a callback sent twice, late, or after the
-- reconciliation changes nothing.
--   p ch:<id>                  hash: the charge (idrec, cobr_conn, cobr_status, cobr_seen)
--   p cobropen:<connection>    zset: left once the cobr is final; its score is when the
--                              reconciliation last asked about it (touch = 1)
--   p bday:<connection>:<day>  hash: the day's report counts each status taken,
--                              cobr_<status> and cobr_<status>_cents, and those the
--                              reconciliation took first, cobr_recovered
-- KEYS[1] = <prefix>{s<k>}:ch:<txid>
-- ARGV = shard key prefix, account, env, idRec, status (the bank's), the attempts (lines
--        "date tipo status code", code '-' none), closing code ('' none), now (ms), now
--        (text, RFC 3339), source (webhook | reconciliation | request), retention (seconds), touch (1:
--        the reconciliation asked), day (YYYY-MM-DD, Brasilia time, of now), then event ids
-- Returns {'changed', events written, charge status}, {'duplicate', '', charge status} or
-- {'unknown'} (no recurring charge of the account with that txid and idRec).
--@include event
--@include transition
if #KEYS ~= 1 or #ARGV < 13 then
  return redis.error_reply('ERR cobr_heard: wants 1 key and 13 arguments and event ids, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, account, env, idrec, bstatus = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local now, now_txt, source, ttl = ARGV[8], ARGV[9], ARGV[10], tonumber(ARGV[11])
local ck = KEYS[1]
local cid = redis.call('HGET', ck, 'id')
local c = redis.call('HMGET', ck, 'status', 'account', 'expires_ms', 'head', 'mid', 'amount',
  'fee', 'postback_url', 'env', 'pix', 'idrec', 'cobr_status', 'cobr_seen', 'cobr_conn',
  'updated_at')
if not cid or not c[1] or c[2] ~= account or c[11] ~= idrec then return {'unknown'} end
local conn, status = c[14], c[1]
local FINAL = {CONCLUIDA = true, EXPIRADA = true, REJEITADA = true, CANCELADA = true}
if ARGV[12] == '1' and not FINAL[c[12] or ''] then
  redis.call('ZADD', p .. 'cobropen:' .. conn, now, cid)
end
local seen = c[13] or ''
local nev, changed = 0, false
local url = c[8] or ''
if url == '' then url = account_info(p, env, account).url end

-- the charge's JSON as it stands, without its closing brace
local function open_json()
  local j = c[4] .. status .. c[5] .. (c[15] or '') .. '"'
  if c[10] and c[10] ~= '' then j = j .. ',"pix":' .. c[10] end
  return j
end
local function emit(etype, data)
  nev = nev + 1
  local evt = ARGV[13 + nev]
  if not evt then return end
  local body = '{"id":"' .. evt .. '","event":"' .. etype .. '","data":' .. data .. '}'
  event_write(p, evt, env, account, etype, url, body, cid, tonumber(now), ttl)
end

for line in string.gmatch(ARGV[6], '[^\n]+') do
  local date, tipo, st, code = string.match(line, '^(%S+) (%S+) (%S+) (%S+)$')
  local key, etype, attempt
  if st == 'REJEITADA' then
    key, etype = date .. ':F', 'EVENT:CHARGE_FAILED'
    attempt = '{"date":"' .. date .. '","type":"' .. tipo .. '","status":"REJEITADA","code":' ..
      (code == '-' and 'null' or ('"' .. code .. '"')) .. '}'
  elseif (st == 'AGENDADA' or st == 'SOLICITADA') and tipo ~= 'AGND' then
    key, etype = date .. ':R', 'EVENT:CHARGE_RETRY_SCHEDULED'
    attempt = '{"date":"' .. date .. '","type":"' .. tipo .. '","status":"' .. st .. '","code":null}'
  end
  if key and not string.find(';' .. seen .. ';', ';' .. key .. ';', 1, true) then
    seen = (seen == '' and key) or (seen .. ';' .. key)
    changed = true
    emit(etype, open_json() .. ',"attempt":' .. attempt .. ',"source":"' .. source .. '"}')
  end
end

local old = c[12] or ''
if bstatus ~= old and not FINAL[old] then
  changed = true
  redis.call('HSET', ck, 'cobr_status', bstatus)
  local dk = p .. 'bday:' .. conn .. ':' .. ARGV[13]
  redis.call('HINCRBY', dk, 'cobr_' .. bstatus, 1)
  redis.call('HINCRBY', dk, 'cobr_' .. bstatus .. '_cents', tonumber(c[6]))
  if source == 'reconciliation' then redis.call('HINCRBY', dk, 'cobr_recovered', 1) end
  redis.call('EXPIRE', dk, ttl)
  if FINAL[bstatus] then redis.call('ZREM', p .. 'cobropen:' .. conn, cid) end
  local to = (bstatus == 'EXPIRADA' and 'EXPIRED') or
    ((bstatus == 'REJEITADA' or bstatus == 'CANCELADA') and 'FAILED') or nil
  if to and status == 'PENDING' then
    charge_apply(p, cid, c, to, nil, now, now_txt, '', ttl, nil, nil)
    status, c[15] = to, now_txt
    local closing = '{"status":"' .. bstatus .. '","code":' ..
      (ARGV[7] == '' and 'null' or ('"' .. ARGV[7] .. '"')) .. '}'
    emit(to == 'EXPIRED' and 'EVENT:CHARGE_EXPIRED' or 'EVENT:CHARGE_FAILED',
      open_json() .. ',"closing":' .. closing .. ',"source":"' .. source .. '"}')
  end
end
if not changed then return {'duplicate', '', status} end
redis.call('HSET', ck, 'cobr_seen', seen)
return {'changed', tostring(nev), status}
