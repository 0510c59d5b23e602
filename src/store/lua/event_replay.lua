-- event_replay: deliver an event again: same id, fresh attempt budget.
-- KEYS[1] = <prefix>{s<k>}:hosts   KEYS[2] = <prefix>{s<k>}:dead
-- ARGV = shard key prefix, id, now_ms, account ('' = any), env
-- Returns 1 (requeued), 2 (already due or in flight: nothing to do), 0 (not found).
--@include event
if #KEYS ~= 2 or #ARGV ~= 5 then
  return redis.error_reply('ERR event_replay: wants 2 keys and 5 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, id, now = ARGV[1], ARGV[2], ARGV[3]
local ek = p .. 'e:' .. id
local e = redis.call('HMGET', ek, 'state', 'account', 'env', 'order', 'attempts', 'url', 'queue')
if not e[1] then return 0 end
if (ARGV[4] ~= '' and e[2] ~= ARGV[4]) or e[3] ~= ARGV[5] then return 0 end
if e[1] == 'pending' or e[1] == 'delivering' then return 2 end
if e[6] == '' then return 2 end
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', ek, 'dead_ms', 'delivered_ms')
redis.call('PERSIST', ek)
redis.call('PERSIST', p .. 'log:' .. id)
-- a fresh budget: attempts and age are counted from now
redis.call('HSET', ek, 'state', 'pending', 'budget_base', e[5] or '0', 'budget_ms', now, 'next_ms', now,
  'updated_ms', now, 'last_error', '')
local ok = p .. 'o:' .. e[4]
if redis.call('RPUSH', ok, id) == 1 then
  due_add(p, e[7] or (e[3] .. ':' .. e[2] .. ':' .. url_host(e[6])), id, now)
end
return 1
