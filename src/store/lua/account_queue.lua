-- account_queue: the accounts waiting for the operator's KYC review, oldest first, with
-- their representatives' CPFs and how many other accounts name one of them. Reads only.
-- KEYS[1] = <prefix>{<env>}:review   zset account id -> created (ms) (every other key
--           shares {<env>})
-- ARGV = environment key prefix g (<prefix>{<env>}:), the most accounts to return
-- Returns {number waiting, {id, created, owner, {CPF...}, other accounts}...}
if #KEYS ~= 1 or #ARGV ~= 2 then
  return redis.error_reply('ERR account_queue: wants 1 keys and 2 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local g = ARGV[1]
local out = {redis.call('ZCARD', KEYS[1])}
local page = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #page, 2 do
  local id = page[i]
  local cpfs = redis.call('SMEMBERS', g .. 'members:' .. id)
  table.sort(cpfs)
  local seen, n = {}, 0
  for _, cpf in ipairs(cpfs) do
    for _, other in ipairs(redis.call('SMEMBERS', g .. 'member:' .. cpf)) do
      if other ~= id and not seen[other] then
        seen[other] = true
        n = n + 1
      end
    end
  end
  out[#out + 1] = {id, page[i + 1], redis.call('HGET', g .. 'owners', id) or '', cpfs, n}
end
return out
