-- secret_rotate: rotate an account's postback signing secret without downtime.
-- KEYS[1] = <prefix>{s<k>}:acct:<env>:<id>
-- ARGV[1] = the new secret, or '' to end a rotation (forget the previous one)
-- While a previous secret is kept, every postback carries both signatures.
-- Returns 1, or 0 when the account does not exist.
if #KEYS ~= 1 or #ARGV ~= 1 then
  return redis.error_reply('ERR secret_rotate: wants 1 keys and 1 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local cur = redis.call('HGET', KEYS[1], 'signing_secret')
if not cur then return 0 end
if ARGV[1] == '' then
  redis.call('HSET', KEYS[1], 'signing_secret_prev', '')
else
  redis.call('HSET', KEYS[1], 'signing_secret_prev', cur, 'signing_secret', ARGV[1])
end
return 1
