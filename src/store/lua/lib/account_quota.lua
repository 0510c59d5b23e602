-- account_quota: whether environment `g` (its key prefix, <prefix>{<env>}:) may take one
-- more business account, made at `now` (ms) with the account key `key_id` ('' = a master
-- key, which has no hourly limit), whose files take `bytes`. `q` holds the limits, 0 meaning
-- none: per_hour (accounts one key may make in any hour), accounts (business accounts of the
-- environment), stored (bytes of account files the environment keeps).
-- Reads only. Returns nil when it may, else {'rate', ms until the key may make another} |
-- {'accounts', limit} | {'bytes', bytes kept now}.
local function account_quota(g, key_id, now, bytes, q)
  if key_id ~= '' and q.per_hour > 0 then
    local made = g .. 'made:' .. key_id
    local since = '(' .. (now - 3600000)
    local n = redis.call('ZCOUNT', made, since, '+inf')
    if n >= q.per_hour then
      -- the key may make another when the (n - per_hour + 1)-th of the hour's is an hour old
      local e = redis.call('ZRANGEBYSCORE', made, since, '+inf', 'WITHSCORES', 'LIMIT',
        n - q.per_hour, 1)
      local wait = tonumber(e[2]) + 3600000 - now
      if wait < 1 then wait = 1 end
      return {'rate', tostring(wait)}
    end
  end
  if q.accounts > 0 then
    local n = redis.call('ZCARD', g .. 'accounts') - redis.call('EXISTS', g .. 'platform')
    if n >= q.accounts then return {'accounts', tostring(q.accounts)} end
  end
  if q.stored > 0 then
    local used = tonumber(redis.call('HGET', g .. 'usage', 'file_bytes') or '0')
    if used + bytes > q.stored then return {'bytes', tostring(used)} end
  end
  return nil
end
