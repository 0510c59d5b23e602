-- event_claim: lease due events of one shard to this dispatcher.
-- KEYS[1] = <prefix>{q<n>}:due   KEYS[2] = <prefix>{q<n>}:lease
-- ARGV = shard key prefix, now_ms, lease_ms, max, claim token
-- A lease that ran out (its dispatcher died) makes the event due again first.
-- Returns a flat list: id, url, body, attempts, budget_base, budget start (created_ms, or
-- the last replay), account, env, ...
if #KEYS ~= 2 or #ARGV ~= 5 then
  return redis.error_reply('ERR event_claim: wants 2 keys and 5 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, now = ARGV[1], tonumber(ARGV[2])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(expired) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('HSET', p .. 'e:' .. id, 'state', 'pending', 'token', '',
    'last_error', 'lease expired: the dispatcher holding it stopped or was too slow')
  redis.call('ZADD', KEYS[1], now, id)
end
local out = {}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(ids) do
  local ek = p .. 'e:' .. id
  redis.call('ZREM', KEYS[1], id)
  local e = redis.call('HMGET', ek, 'url', 'body', 'budget_base', 'created_ms', 'account', 'env',
    'budget_ms')
  -- after a replay, the age limit counts from the replay
  if e[7] and e[7] ~= '' then e[4] = e[7] end
  if e[1] then
    local attempts = redis.call('HINCRBY', ek, 'attempts', 1)
    redis.call('HSET', ek, 'state', 'delivering', 'token', ARGV[5], 'updated_ms', now)
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), id)
    for _, v in ipairs({id, e[1], e[2], tostring(attempts), e[3], e[4], e[5], e[6]}) do
      out[#out + 1] = v
    end
  end
end
return out
