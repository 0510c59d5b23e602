-- ingest_relay: record an upstream notification about a charge pixrelay does
-- not know, to relay it as received to the account's postbackUrl; once per
-- upstream notification id.
-- KEYS[1] = <prefix>{<env>}:upstream:<account>:<upstream id>   -> event id, for ARGV[9] seconds
-- KEYS[2] = <prefix>{<env>}:outbox
-- ARGV = upstream id, event id, event type, account, account key, body, order key, now_ms,
--        retention (seconds)
-- Returns {'ok', event id} or {'duplicate', event id}.
if #KEYS ~= 2 or #ARGV ~= 9 then
  return redis.error_reply('ERR ingest_relay: wants 2 keys and 9 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local seen = redis.call('GET', KEYS[1])
if seen then return {'duplicate', seen} end
local url = redis.call('HGET', ARGV[5], 'postback_url') or ''
redis.call('LPUSH', KEYS[2], cjson.encode({id = ARGV[2], type = ARGV[3], account = ARGV[4],
  url = url, body = ARGV[6], order = ARGV[7], created = tonumber(ARGV[8])}))
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[9])
return {'ok', ARGV[2]}
