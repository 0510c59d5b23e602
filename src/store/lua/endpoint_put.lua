-- endpoint_put: create a webhook endpoint of an account, or change one (lib/endpoint.lua
-- says what it holds and what the account's field fanout, which event_write reads, is).
-- KEYS[1] = <prefix>{s<k>}:ep:<endpoint id>
-- ARGV = shard key prefix, env, account, endpoint id, now (ms), create ('1') or update
--   ('0'), the most endpoints an account may have in env, the event retention (seconds),
--   then field/value pairs of what to set: url, description, types, headers, enabled
--   ('1' | '0'), and on create secret.
-- An update that enables an endpoint forgets its failures and puts its queue back in p
-- hosts (its deliveries kept while it was disabled go out, in order); one that disables it
-- (by request) keeps what it holds and gives it no new event (endpoint_hold). Each writes
-- its operational event (EVENT:OPERATIONAL_ENDPOINT_ENABLED or _DISABLED, "by":"request");
-- an endpoint created disabled writes none, and has its queue in p held too.
-- Returns {'ok', the record's HGETALL} | {'not_found'} (no such endpoint of the account)
--   | {'no_account'} | {'too_many', how many the account has}.
--@include endpoint_admin
if #KEYS ~= 1 or #ARGV < 8 or #ARGV % 2 ~= 0 then
  return redis.error_reply('ERR endpoint_put: wants 1 keys and 8 + 2n arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, env, account, id, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local create, most, ttl = ARGV[6] == '1', tonumber(ARGV[7]), tonumber(ARGV[8])
local k = KEYS[1]
local idx = p .. 'eps:' .. env .. ':' .. account
local set, enabled = {}, nil
for i = 9, #ARGV, 2 do
  if ARGV[i] == 'enabled' then
    enabled = ARGV[i + 1] == '1'
  else
    set[#set + 1] = ARGV[i]
    set[#set + 1] = ARGV[i + 1]
  end
end
if create then
  if redis.call('EXISTS', p .. 'acct:' .. env .. ':' .. account) == 0 then
    return {'no_account'}
  end
  local n = redis.call('ZCARD', idx)
  if n >= most then return {'too_many', n} end
  redis.call('HSET', k, 'id', id, 'env', env, 'account', account, 'created_ms', now,
    'updated_ms', now, 'state', 'on', 'fails', 0, unpack(set))
  if enabled == false then
    redis.call('HSET', k, 'state', 'off', 'disabled_ms', now, 'disabled_why', 'disabled by request')
    -- in p held as every disabled endpoint's (counted there by shard_stats)
    redis.call('ZADD', p .. 'held', 'NX', now, ep_lib().queue(env, account, id))
  end
  redis.call('ZADD', idx, now, id)
  fanout_rebuild(p, env, account)
else
  local e = redis.call('HMGET', k, 'env', 'account', 'state')
  if e[1] ~= env or e[2] ~= account then return {'not_found'} end
  set[#set + 1] = 'updated_ms'
  set[#set + 1] = now
  redis.call('HSET', k, unpack(set))
  if enabled == true and e[3] ~= 'on' then
    endpoint_resume(p, id, env, account, now, ttl)
  elseif enabled == false and e[3] ~= 'off' then
    endpoint_hold(p, id, env, account, 'off', 'disabled by request', now, ttl)
  else
    fanout_rebuild(p, env, account)
  end
end
return {'ok', redis.call('HGETALL', k)}
