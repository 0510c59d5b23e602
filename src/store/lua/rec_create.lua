-- rec_create: store a recurrence the bank made (POST /locrec, POST /rec), CREATED.
-- KEYS[1] = <prefix>{s<k>}:rec:<id>              the recurrence (hash)
-- KEYS[2] = <prefix>{s<k>}:recs:<account>        zset id -> created ms
-- KEYS[3] = <prefix>{s<k>}:recx:<account>        hash idRec -> id
-- KEYS[4] = <prefix>{s<k>}:recopen:<connection>  zset id -> when last asked (ms)
-- KEYS[5] = <prefix>{s<k>}:bday:<connection>:<day>  the day's counts: rec_CREATED
-- ARGV = id, account, env, connection, idRec, head (the JSON's fixed part), created ms,
--        created at (text), postbackUrl ('' = none), BR Code (its QR image's), retention (s)
-- Returns {'created'}, or {'existing', id} when the bank's idRec is another recurrence's.
if #KEYS ~= 5 or #ARGV ~= 11 then
  return redis.error_reply('ERR rec_create: wants 5 keys and 11 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local prior = redis.call('HGET', KEYS[3], ARGV[5])
if prior and prior ~= ARGV[1] then
  return {'existing', prior}
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'account', ARGV[2], 'env', ARGV[3], 'connection', ARGV[4],
  'idrec', ARGV[5], 'head', ARGV[6], 'status', 'CREATED', 'created_ms', ARGV[7],
  'updated_at', ARGV[8], 'postback_url', ARGV[9], 'closing', '', 'br_code', ARGV[10])
redis.call('ZADD', KEYS[2], ARGV[7], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[5], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1])
redis.call('HINCRBY', KEYS[5], 'rec_CREATED', 1)
redis.call('EXPIRE', KEYS[5], tonumber(ARGV[11]))
return {'created'}
