-- key_list: a page of the API keys of an environment, or of one account, newest first.
-- KEYS[1] = <prefix>{keys}:all   zset key id -> created ms (every key)
-- ARGV = keys prefix (<prefix>{keys}:), environment, account ('' = every account of the
--        environment), max created ms ('+inf' = from the newest), id to start below at
--        exactly that time ('' = none), limit, the kind of the key asking ('master' sees
--        every key; 'account' sees account keys only, never a master key, even of its own
--        account: master keys belong to the platform account)
-- The indexes it reads, <p>env:<env> and <p>acct:<env>:<account> (zsets like KEYS[1]), are
-- written by key_create; keys made before they were are indexed here, once (when the
-- indexes hold fewer keys than KEYS[1]).
-- Returns id, env, kind, account, description, hint, created_at, last_used_at, revoked_at
-- for each key of the page, then the resume point (page_desc).
--@include page
if #KEYS ~= 1 or #ARGV ~= 7 then
  return redis.error_reply('ERR key_list: wants 1 keys and 7 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, env, account, masters = ARGV[1], ARGV[2], ARGV[3], ARGV[7] == 'master'
local total = redis.call('ZCARD', KEYS[1])
if total > redis.call('ZCARD', p .. 'env:sandbox') + redis.call('ZCARD', p .. 'env:production') then
  local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #all, 2 do
    local sha = redis.call('GET', p .. 'id:' .. all[i])
    local r = sha and redis.call('HMGET', p .. 'h:' .. sha, 'env', 'account') or {}
    if r[1] and r[2] then
      redis.call('ZADD', p .. 'env:' .. r[1], all[i + 1], all[i])
      redis.call('ZADD', p .. 'acct:' .. r[1] .. ':' .. r[2], all[i + 1], all[i])
    end
  end
end
local idx = p .. 'env:' .. env
if account ~= '' then idx = p .. 'acct:' .. env .. ':' .. account end
return page_desc(idx, ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[6]) + 1, function(id)
  local sha = redis.call('GET', p .. 'id:' .. id)
  if not sha then return nil end
  local r = redis.call('HMGET', p .. 'h:' .. sha, 'id', 'env', 'kind', 'account', 'description',
    'hint', 'created_at', 'last_used_at', 'revoked_at')
  if not r[1] or r[2] ~= env or (account ~= '' and r[4] ~= account) then return nil end
  if r[3] == 'master' and not masters then return nil end
  for i = 5, 9 do r[i] = r[i] or '' end
  return r
end)
