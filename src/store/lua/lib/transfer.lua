-- transfer_side: one side of an internal transfer in its shard `p`: the balance change
-- (`delta` cents, negative for the source), its ledger entry and, when the account has a
-- postbackUrl or webhook endpoints, its event `evt` (EVENT:TRANSFER_DONE, direction 'out'
-- or 'in').
-- `t` holds the transfer: id, amount, from, to, from_key, to_key, at (ms), at_txt, env.
-- Returns the new balance.
local function transfer_side(p, t, acct, delta, evt, direction, ttl)
  local ak = p .. 'acct:' .. t.env .. ':' .. acct
  local bal = redis.call('HINCRBY', ak, 'balance', delta)
  local lk = p .. 'ledger:' .. acct
  redis.call('LPUSH', lk, cjson.encode({at = tonumber(t.at), amount = delta, balance = bal,
    kind = 'internal_transfer', transfer = t.id,
    counterparty = (direction == 'out') and t.to or t.from}))
  redis.call('LTRIM', lk, 0, 999)
  local a = account_info(p, t.env, acct)
  local url = a.url
  if url ~= '' or a.fan then
    local data = '{"id":"' .. t.id .. '","amount":' .. t.amount .. ',"status":"DONE","direction":"' ..
      direction .. '","from_key":' .. cjson.encode(t.from_key) .. ',"to_key":' ..
      cjson.encode(t.to_key) .. ',"fromAccount":"' .. t.from .. '","toAccount":"' .. t.to ..
      '","createdAt":"' .. t.at_txt .. '"}'
    local body = '{"id":"' .. evt .. '","event":"EVENT:TRANSFER_DONE","data":' .. data .. '}'
    event_write(p, evt, t.env, acct, 'EVENT:TRANSFER_DONE', url, body, 'transfer:' .. acct,
      t.at, ttl)
  end
  return bal
end
