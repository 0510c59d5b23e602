-- account_put: write a new account's record and its files into its shard. The account is
-- not reachable (no Pix key, taxID or listing points to it) until account_index has run;
-- if that refuses it, the caller deletes both keys again.
-- KEYS[1] = <prefix>{s<k>}:acct:<env>:<id>
-- ARGV = the key of the account's files (<prefix>{s<k>}:files:<id>, a hash SHA-256 ->
--        bytes), number n of fields, n name/value pairs, then pairs of file SHA-256 and bytes
-- Returns 1, or 0 when the record already exists (nothing written).
if #KEYS ~= 1 or #ARGV < 2 or #ARGV < 2 + 2 * tonumber(ARGV[2]) then
  return redis.error_reply('ERR account_put: wants 1 keys and 2 + 2n arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 3, 2 + 2 * n))
local i = 3 + 2 * n
while i + 1 <= #ARGV do
  redis.call('HSET', ARGV[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
return 1
