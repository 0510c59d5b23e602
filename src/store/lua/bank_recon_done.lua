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
-- Returns the consecutive failures now (0 after a success), or -1 when the connection is
-- gone: nothing written then, and it leaves the schedule.
--@include spans
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
if ok then
  local upto = tonumber(ARGV[10])
  local was = tonumber(redis.call('HGET', KEYS[1], 'rec_at') or '0')
  if upto > was then redis.call('HSET', KEYS[1], 'rec_at', upto) end
  redis.call('HSET', KEYS[1], 'rec_ok_ms', ARGV[2], 'rec_fail', 0, 'rec_error', '',
    'rec_pages', ARGV[11], 'rec_listed', ARGV[12], 'rec_new', ARGV[13], 'rec_refunds', ARGV[14])
  redis.call('HINCRBY', KEYS[1], 'rec_new_total', tonumber(ARGV[13]))
else
  redis.call('HSET', KEYS[1], 'rec_error', ARGV[10], 'rec_error_ms', ARGV[2])
  failures = redis.call('HINCRBY', KEYS[1], 'rec_fail', 1)
end
if ARGV[4] ~= '' and redis.call('ZSCORE', KEYS[3], id) then
  redis.call('ZADD', KEYS[3], tonumber(ARGV[4]), id)
  if ok then redis.call('ZADD', KEYS[4], now, id) end
end
return failures
