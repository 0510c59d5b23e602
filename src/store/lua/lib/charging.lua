-- account_charging: which bank connection the charges of `account` of `env` go to, written
-- into its record (`p` is the shard prefix <prefix>{s<k>}:; it reads banks:<account> and
-- each bank:<id>, writes acct:<env>:<account>). The charging connection is the account's
-- only connection in env, or the one of several whose field `default` is '1'. The record
-- gets charge_via = its id, 'none' (no connection) or 'many' (several, none marked),
-- charge_key = its Pix key ('' for none and many), and bank_api = its id when it has API
-- credentials (its charges are then created at its bank; absent otherwise). With `adopt`
-- (an account whose record an older version wrote: no charge_via yet), several
-- connections none of which is marked, and a bank_api naming one of them, that one is
-- marked default: the charges keep going where they went. When something changed, the
-- processes' caches forget the account (`channel`, "a:<account>"). Nothing is written to
-- an account that does not exist. Returns {charge_via, charge_key, bank_api or ''}.
local function account_charging(p, env, account, channel, adopt)
  local ak = p .. 'acct:' .. env .. ':' .. account
  local old = redis.call('HMGET', ak, 'id', 'charge_via', 'charge_key', 'bank_api')
  if not old[1] then return {'none', '', ''} end
  local n, only, def = 0, nil, nil
  local api_there = false
  for _, id in ipairs(redis.call('ZRANGE', p .. 'banks:' .. account, 0, -1)) do
    local c = redis.call('HMGET', p .. 'bank:' .. id, 'env', 'default')
    if c[1] == env then
      n = n + 1
      only = id
      if c[2] == '1' then def = id end
      if id == old[4] then api_there = true end
    end
  end
  if adopt and n > 1 and not def and api_there then
    redis.call('HSET', p .. 'bank:' .. old[4], 'default', '1')
    def = old[4]
  end
  local via = 'many'
  if n == 0 then via = 'none' elseif n == 1 then via = only elseif def then via = def end
  local key, api = '', ''
  if via ~= 'none' and via ~= 'many' then
    local c = redis.call('HMGET', p .. 'bank:' .. via, 'pix_key', 'api_url')
    key = c[1] or ''
    if c[2] and c[2] ~= '' then api = via end
  end
  if old[2] ~= via or (old[3] or '') ~= key or (old[4] or '') ~= api then
    redis.call('HSET', ak, 'charge_via', via, 'charge_key', key)
    if api ~= '' then
      redis.call('HSET', ak, 'bank_api', api)
    else
      redis.call('HDEL', ak, 'bank_api')
    end
    redis.call('PUBLISH', channel, 'a:' .. account)
  end
  return {via, key, api}
end

-- bank_mark_default: connection `id` of `account` becomes its default in `env`, and no
-- other connection of the account in env is (`p` as above; it writes bank:<id> of the
-- account's connections). The caller then derives the charging connection again.
local function bank_mark_default(p, env, account, id)
  for _, other in ipairs(redis.call('ZRANGE', p .. 'banks:' .. account, 0, -1)) do
    if other ~= id and redis.call('HGET', p .. 'bank:' .. other, 'env') == env then
      redis.call('HDEL', p .. 'bank:' .. other, 'default')
    end
  end
  redis.call('HSET', p .. 'bank:' .. id, 'default', '1')
end
