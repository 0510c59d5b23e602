-- account_ledger: an account as the dashboard shows it, with a page of its ledger, read at
-- one moment (the balance agrees with the entries).
-- KEYS[1] = <prefix>{s<k>}:acct:<env>:<id>   KEYS[2] = <prefix>{s<k>}:ledger:<id>
-- ARGV = position ('' = from the newest entry), fingerprint of the entry before it, limit
-- The ledger is a list, newest first, that grows at its head and is trimmed at its tail: a
-- position counted from the head moves when entries arrive, so the page after an entry is
-- found again by the entry's fingerprint (the first 12 hex digits of its SHA1), searched
-- from where it was on.
-- Returns {fields of the account (11, false when absent), resume position ('' = none),
--   fingerprint of the last entry shown, entries...}, or {} when the account does not exist.
if #KEYS ~= 2 or #ARGV ~= 3 then
  return redis.error_reply('ERR account_ledger: wants 2 keys and 3 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local a = redis.call('HMGET', KEYS[1], 'id', 'kind', 'officialName', 'tradeName', 'taxID',
  'status', 'owner', 'pix_key', 'postback_url', 'balance', 'created_at')
if not a[1] then return {} end
local limit = tonumber(ARGV[3])
local start = 0
if ARGV[1] ~= '' then
  -- the entry last shown was at ARGV[1] - 1 then; new entries only push it further
  local at, found = tonumber(ARGV[1]) - 1, nil
  local n = redis.call('LLEN', KEYS[2])
  while at < n and not found do
    local chunk = redis.call('LRANGE', KEYS[2], at, at + 99)
    for i, e in ipairs(chunk) do
      if string.sub(redis.sha1hex(e), 1, 12) == ARGV[2] then found = at + i break end
    end
    at = at + #chunk
    if #chunk == 0 then break end
  end
  -- gone (trimmed away at the tail): nothing older is left either
  if not found then start = n else start = found end
end
local entries = redis.call('LRANGE', KEYS[2], start, start + limit)
local out = {}
for i = 1, 11 do out[i] = a[i] or false end
local shown = math.min(#entries, limit)
if #entries > limit then
  out[12] = tostring(start + shown)
  out[13] = string.sub(redis.sha1hex(entries[shown]), 1, 12)
else
  out[12], out[13] = '', ''
end
for i = 1, shown do out[#out + 1] = entries[i] end
return out
