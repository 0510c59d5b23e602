-- endpoint_rotate: a webhook endpoint gets a new signing secret; the one before keeps
-- signing beside it until the grace ends (both signatures in webhook-signature, as
-- Standard Webhooks allows), then alone the new one signs (event_settle.lua reads
-- prev_until at each lease).
-- KEYS[1] = <prefix>{s<k>}:ep:<endpoint id>
-- ARGV = env, account, the new secret, the end of the grace (ms; '' = none)
-- Returns 1, or 0 when the account has no such endpoint.
if #KEYS ~= 1 or #ARGV ~= 4 then
  return redis.error_reply('ERR endpoint_rotate: wants 1 keys and 4 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local e = redis.call('HMGET', KEYS[1], 'env', 'account', 'secret')
if e[1] ~= ARGV[1] or e[2] ~= ARGV[2] then return 0 end
if ARGV[4] == '' then
  redis.call('HSET', KEYS[1], 'secret', ARGV[3], 'secret_prev', '', 'prev_until', '')
else
  redis.call('HSET', KEYS[1], 'secret', ARGV[3], 'secret_prev', e[3] or '', 'prev_until', ARGV[4])
end
return 1
