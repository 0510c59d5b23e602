-- account_quota: whether environment `g` (its key prefix, <prefix>{<env>}:) may take one
-- more business account, made at `now` (ms) by an account key of account `by` ('' = a
-- master key, which has no hourly limit; all of an account's keys share one hour, so that
-- more keys do not make more accounts), whose files take `bytes`. `q` holds the limits, 0
-- meaning none: per_hour (accounts one account's keys may make in any hour), accounts
-- (business accounts of the environment), stored (bytes of account files the environment
-- keeps).
-- Reads only. Returns nil when it may, else {'rate', ms until the account's keys may make
-- another} | {'accounts', limit} | {'bytes', bytes kept now}.
local function account_quota(g, by, now, bytes, q)
  if by ~= '' and q.per_hour > 0 then
    local made = g .. 'made:' .. by
    local since = '(' .. (now - 3600000)
    local n = redis.call('ZCOUNT', made, since, '+inf')
    if n >= q.per_hour then
      -- its keys may make another when the (n - per_hour + 1)-th of the hour's is an hour old
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

-- account_quota_count: count a creation by an account key of account `by` ('' = a master key:
-- nothing to count) at `now` (ms) in that account's sliding hour, as `member`: the account made,
-- or the id a creation refused for its taxID would have had (such refusals count too, so
-- that keys cannot probe taxIDs without limit).
local function account_quota_count(g, by, now, member)
  if by == '' then return end
  local made = g .. 'made:' .. by
  redis.call('ZREMRANGEBYSCORE', made, '-inf', now - 3600000)
  redis.call('ZADD', made, now, member)
  redis.call('PEXPIRE', made, 3600000)
end

-- account_quota_duplicate: refuse a creation (the would-be account `member`, by `by` at
-- `now`, acting for account `owner`) whose taxID account `holder` already has. The attempt
-- counts in the account's hour (account_quota_count). The holder is named only to a caller who
-- may know it: a master key, or an account key acting for the holder itself or for the
-- holder's owner (the account that created it, which was answered its id then); anyone
-- else learns that the taxID is taken, not by whom.
-- Returns {'duplicate', holder} or {'duplicate', ''}.
local function account_quota_duplicate(g, holder, by, owner, now, member)
  account_quota_count(g, by, now, member)
  if by == '' or holder == owner or redis.call('HGET', g .. 'owners', holder) == owner then
    return {'duplicate', holder}
  end
  return {'duplicate', ''}
end
