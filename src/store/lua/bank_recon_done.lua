-- bank_recon_done: what one reconciliation of a bank connection found, in its record
-- (docs/bank-api.md, "Reconciliation").
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = id, now (ms), ok (1 | 0), then with ok: reconciled up to (ms), pages read, Pix
--        the bank listed, Pix new to pixrelay (its webhook had not brought them), refunds
--        asked about; without: the error (text, no secret in it)
-- On success rec_at (the instant up to which the bank's Pix were taken) only moves
-- forward, and the failures are forgotten; a failure counts one more (the caller's
-- backoff) and keeps its error.
-- Returns the consecutive failures now (0 after a success), or -1 when the connection is
-- gone.
if #KEYS ~= 1 or #ARGV < 4 then
  return redis.error_reply('ERR bank_recon_done: wants 1 keys and 4 + ... arguments')
end
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return -1 end
if ARGV[3] == '1' then
  local upto = tonumber(ARGV[4])
  local was = tonumber(redis.call('HGET', KEYS[1], 'rec_at') or '0')
  if upto > was then redis.call('HSET', KEYS[1], 'rec_at', upto) end
  redis.call('HSET', KEYS[1], 'rec_ok_ms', ARGV[2], 'rec_fail', 0, 'rec_error', '',
    'rec_pages', ARGV[5], 'rec_listed', ARGV[6], 'rec_new', ARGV[7], 'rec_refunds', ARGV[8])
  redis.call('HINCRBY', KEYS[1], 'rec_new_total', tonumber(ARGV[7]))
  return 0
end
redis.call('HSET', KEYS[1], 'rec_error', ARGV[4], 'rec_error_ms', ARGV[2])
return redis.call('HINCRBY', KEYS[1], 'rec_fail', 1)
