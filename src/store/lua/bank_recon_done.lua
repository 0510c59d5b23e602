-- bank_recon_done: the end of one reconciliation run of a bank connection (docs/bank-api.md,
-- "Reconciliation"), in one write: what it found in the connection's record, the span of
-- the bank's list it read whole (lib/spans.lua), the refunds it heard settled, and when the
-- next run is due.
-- KEYS[1] = <prefix>{s<k>}:bank:<id>, KEYS[2] = <prefix>{s<k>}:bread:<id>,
-- KEYS[3] = <prefix>{s<k>}:bankrec, KEYS[4] = <prefix>{s<k>}:bankok:<env>,
-- KEYS[5] = <prefix>{s<k>}:bref:<id>
-- ARGV = id, now (ms), ok (1 | 0), next run due (ms; '' = the schedule as it is: a run
--        asked for), the span read whole: from, to (ms; '' = none), keep (ms: the event
--        retention), most spans kept, the refunds the bank settled ("<endToEndId> <refund
--        id>" joined by newlines, '' none), then with ok: reconciled up to (ms), pages
--        read, Pix the bank listed, Pix new to pixrelay (its webhook had not brought them),
--        refunds asked about; without: the error (text, no secret in it)
-- On success rec_at (the instant up to which the bank's Pix were taken) only moves
-- forward, and the failures are forgotten; a failure counts one more (the caller's
-- backoff, computed from the count the claim read) and keeps its error. The next run is
-- scheduled only while the connection is (a success is then its success clock too).
-- Its operational events (lib/operational.lua), to the account's endpoints that take them:
-- EVENT:OPERATIONAL_RECONCILIATION_FAILING at the first failure after a success (or of a
-- connection never reconciled), not at each retry; EVENT:OPERATIONAL_RECONCILIATION_LATE at a
-- failure once no run has succeeded for a day (its success clock, KEYS[4]), once until one
-- does; EVENT:OPERATIONAL_RECONCILIATION_RECOVERED at the success after failures; and
-- EVENT:OPERATIONAL_PIX_RECOVERED once per Brasilia day over (reconciled up to 10 minutes past
-- its end) on which a reconciliation took Pix the webhook never brought (p brec: of the
-- day, lib bank_pix.lua), looked for in the days from where this run or the reconciled
-- instant began (at most 32, and no further back than the retention): its id is the
-- connection's and the day's (its instant the day's end), so a day is told once, with what
-- was taken by then (the day's report lists any taken later).
-- Derives from the shard key prefix (KEYS[1]'s): brec:<id>:<day> and bday:<id>:<day> (read),
-- and what an event writes (lib/event.lua).
-- The record's fields besides: rec_fail_ms (the first failure of a run of them), rec_late_ms
-- (when it was said late).
-- Returns the consecutive failures now (0 after a success), or -1 when the connection is
-- gone: nothing written then, and it leaves the schedule.
--@include spans
--@include operational
if #KEYS ~= 5 or #ARGV < 10 then
  return redis.error_reply('ERR bank_recon_done: wants 5 keys and 10 + ... arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local id, now = ARGV[1], tonumber(ARGV[2])
if redis.call('HGET', KEYS[1], 'id') ~= id then
  redis.call('ZREM', KEYS[3], id)
  redis.call('ZREM', KEYS[4], id)
  return -1
end
if ARGV[5] ~= '' then
  bank_read_span(KEYS[2], tonumber(ARGV[5]), tonumber(ARGV[6]), now, tonumber(ARGV[7]),
    tonumber(ARGV[8]))
end
for m in string.gmatch(ARGV[9], '[^\n]+') do redis.call('ZREM', KEYS[5], m) end
local ok, failures = ARGV[3] == '1', 0
local c = redis.call('HMGET', KEYS[1], 'account', 'env', 'rec_at', 'rec_fail', 'rec_fail_ms',
  'rec_late_ms', 'rec_error', 'pix_key')
local account, env, ttl = c[1] or '', c[2] or '', math.floor(tonumber(ARGV[7]) / 1000)
local p = string.sub(KEYS[1], 1, #KEYS[1] - #('bank:' .. id))
local O = op_lib()
local about = '"connection":"' .. id .. '","pixKey":' .. O.str(c[8])
if ok then
  local upto = tonumber(ARGV[10])
  local was = tonumber(c[3] or '0') or 0
  if upto > was then redis.call('HSET', KEYS[1], 'rec_at', upto) end
  redis.call('HSET', KEYS[1], 'rec_ok_ms', ARGV[2], 'rec_fail', 0, 'rec_error', '',
    'rec_pages', ARGV[11], 'rec_listed', ARGV[12], 'rec_new', ARGV[13], 'rec_refunds', ARGV[14],
    'rec_fail_ms', '', 'rec_late_ms', '')
  redis.call('HINCRBY', KEYS[1], 'rec_new_total', tonumber(ARGV[13]))
  local before = tonumber(c[4] or '0') or 0
  if before > 0 then
    O.write(p, env, account, 'EVENT:OPERATIONAL_RECONCILIATION_RECOVERED', id, '{' .. about ..
      ',"failedRuns":' .. before .. ',"failingSince":' .. O.time(c[5]) .. ',"wasLate":' ..
      tostring((c[6] or '') ~= '') .. ',"lastError":' .. O.str(c[7]) .. ',"recoveredAt":' ..
      O.time(now) .. '}', now, ttl)
  end
  -- the days over that a reconciliation took Pix of, each told once
  local from = was
  if ARGV[5] ~= '' and tonumber(ARGV[5]) < from then from = tonumber(ARGV[5]) end
  local oldest = upto - math.min(32 * O.DAY_MS, tonumber(ARGV[7]))
  if from < oldest then from = oldest end
  local day0 = math.floor((from - O.BRT_MS) / O.DAY_MS)
  for d = day0, math.floor((upto - O.BRT_MS) / O.DAY_MS) do
    local dend = (d + 1) * O.DAY_MS + O.BRT_MS
    if dend + 600000 > upto then break end
    local date = O.date(d * O.DAY_MS + O.BRT_MS)
    local rk = p .. 'brec:' .. id .. ':' .. date
    local n = redis.call('LLEN', rk)
    if n > 0 then
      local items = {}
      for _, e in ipairs(redis.call('LRANGE', rk, 0, 99)) do
        local e2e, txid, cid, evt, cents = string.match(e, '^(%S+) ?(%S*) ?(%S*) ?(%S*) ?(%S*)$')
        if e2e then
          local function w(v) return (v and v ~= '-') and v or '' end
          items[#items + 1] = '{"endToEndId":' .. O.str(e2e) .. ',"txid":' .. O.str(w(txid)) ..
            ',"charge":' .. O.str(w(cid)) .. ',"event":' .. O.str(w(evt)) .. ',"amount":' ..
            (tonumber(cents) or 'null') .. '}'
        end
      end
      local list = O.list(items, 100)
      local dk = redis.call('HMGET', p .. 'bday:' .. id .. ':' .. date, 'reconciliation',
        'reconciliation_cents')
      O.write(p, env, account, 'EVENT:OPERATIONAL_PIX_RECOVERED', id .. ':' .. date, '{' ..
        about .. ',"date":"' .. date .. '","count":' .. (tonumber(dk[1] or '') or n) ..
        ',"cents":' .. (tonumber(dk[2] or '') or 0) .. ',"pix":' .. list .. ',"truncated":' ..
        tostring(n > #items) .. '}', now, ttl, dend)
    end
  end
else
  redis.call('HSET', KEYS[1], 'rec_error', ARGV[10], 'rec_error_ms', ARGV[2])
  failures = redis.call('HINCRBY', KEYS[1], 'rec_fail', 1)
  local since = tonumber(c[5] or '') or now
  if failures == 1 or not tonumber(c[5] or '') then
    redis.call('HSET', KEYS[1], 'rec_fail_ms', since)
  end
  if failures == 1 then
    O.write(p, env, account, 'EVENT:OPERATIONAL_RECONCILIATION_FAILING', id, '{' .. about ..
      ',"error":' .. O.str(ARGV[10]) .. ',"failingSince":' .. O.time(since) ..
      ',"reconciledUntil":' .. O.time(c[3]) .. '}', now, ttl)
  end
  -- no success for a day (its success clock: when it last succeeded, or was scheduled)
  local okms = tonumber(redis.call('ZSCORE', KEYS[4], id) or '')
  if okms and now - okms > O.DAY_MS and (c[6] or '') == '' then
    redis.call('HSET', KEYS[1], 'rec_late_ms', now)
    O.write(p, env, account, 'EVENT:OPERATIONAL_RECONCILIATION_LATE', id, '{' .. about ..
      ',"lastSuccessAt":' .. O.time(okms) .. ',"failedRuns":' .. failures .. ',"error":' ..
      O.str(ARGV[10]) .. ',"failingSince":' .. O.time(since) .. ',"reconciledUntil":' ..
      O.time(c[3]) .. '}', now, ttl)
  end
end
if ARGV[4] ~= '' and redis.call('ZSCORE', KEYS[3], id) then
  redis.call('ZADD', KEYS[3], tonumber(ARGV[4]), id)
  if ok then redis.call('ZADD', KEYS[4], now, id) end
end
return failures
