-- endpoint_delete: a webhook endpoint of an account is deleted: its record goes, no event
-- goes to it any more (the account's field fanout, lib/endpoint.lua), and its deliveries
-- not yet settled are dead ('the webhook endpoint was deleted'): those of its due set by
-- the lease, as its budget allows (event_settle.lua), each the next of its lane after it.
-- KEYS[1] = <prefix>{s<k>}:ep:<endpoint id>
-- ARGV = shard key prefix, env, account, endpoint id, now (ms)
-- Returns 1, or 0 when the account has no such endpoint.
--@include endpoint_admin
if #KEYS ~= 1 or #ARGV ~= 5 then
  return redis.error_reply('ERR endpoint_delete: wants 1 keys and 5 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, env, account, id, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local e = redis.call('HMGET', KEYS[1], 'env', 'account')
if e[1] ~= env or e[2] ~= account then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', p .. 'eps:' .. env .. ':' .. account, id)
fanout_rebuild(p, env, account)
local q = ep_lib().queue(env, account, id)
redis.call('ZREM', p .. 'held', q)
if redis.call('EXISTS', p .. 'due:' .. q) == 1 then redis.call('ZADD', p .. 'hosts', now, q) end
return 1
