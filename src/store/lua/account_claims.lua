-- account_claims: an account's review status and owner and, for each of its members (the
-- CPFs of its representatives), the other accounts that name the same CPF with their review
-- status and owner: what the operator weighs before approving (pixrelay review show).
-- Reads only.
-- KEYS[1] = <prefix>{<env>}:kyc   hash account id -> review status (every other key shares
--           {<env>})
-- ARGV = environment key prefix g (<prefix>{<env>}:), account id, the most other accounts
--        to name per CPF
-- Returns {status ('' = none), owner ('' = unknown), {CPF, number of other accounts,
--   {id, status, owner, ...}}...}
if #KEYS ~= 1 or #ARGV ~= 3 then
  return redis.error_reply('ERR account_claims: wants 1 keys and 3 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local g, id, cap = ARGV[1], ARGV[2], tonumber(ARGV[3])
local owners = g .. 'owners'
local out = {redis.call('HGET', KEYS[1], id) or '', redis.call('HGET', owners, id) or ''}
local cpfs = redis.call('SMEMBERS', g .. 'members:' .. id)
table.sort(cpfs)
for _, cpf in ipairs(cpfs) do
  local all = redis.call('SMEMBERS', g .. 'member:' .. cpf)
  table.sort(all)
  local list, n = {}, 0
  for _, other in ipairs(all) do
    if other ~= id then
      n = n + 1
      if n <= cap then
        list[#list + 1] = other
        list[#list + 1] = redis.call('HGET', KEYS[1], other) or ''
        list[#list + 1] = redis.call('HGET', owners, other) or ''
      end
    end
  end
  out[#out + 1] = {cpf, n, list}
end
return out
