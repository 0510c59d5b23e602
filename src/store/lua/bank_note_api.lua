-- bank_note_api: what a process saw of a connection's bank API (docs/bank-api.md,
-- "Reachability": api.health), kept in the connection's record: when it last got a token,
-- last called the bank, last failed and why (never a secret).
-- KEYS[1] = <prefix>{s<k>}:bank:<id>
-- ARGV = token (ms), call (ms), error (ms), the error's text; 0 ms: nothing to say of it
-- Each instant only moves forward (processes tell in any order), and the error's text goes
-- with its instant. A connection removed meanwhile stays removed.
-- Returns 1, or 0 when there is no such connection.
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR bank_note_api: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local fields = {'api_token_ms', 'api_call_ms', 'api_error_ms'}
for j = 1, 3 do
  local v = tonumber(ARGV[j])
  if v > 0 and v > tonumber(redis.call('HGET', KEYS[1], fields[j]) or '0') then
    redis.call('HSET', KEYS[1], fields[j], ARGV[j])
    if j == 3 then redis.call('HSET', KEYS[1], 'api_error', ARGV[4]) end
  end
end
return 1
