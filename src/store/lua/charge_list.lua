-- charge_list: a page of an account's charges, newest first, optionally of one status.
-- KEYS[1] = <prefix>{s<k>}:charges:<account>   zset charge id -> created ms (or
--           <prefix>{s<k>}:recch:<account>:<recurrence>, the charges of one recurrence)
-- ARGV = charge key prefix (<prefix>{s<k>}:ch:), max created ms ('+inf' = from the
--        newest), id to start below at exactly that time ('' = none), status ('' = any),
--        limit, how many charges to look at at most
-- Returns id, head, status, mid, updated_at, pix ('' = none) for each charge of the page
-- (the parts charge_assemble joins), then the resume point (page_desc).
--@include page
if #KEYS ~= 1 or #ARGV ~= 6 then
  return redis.error_reply('ERR charge_list: wants 1 keys and 6 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
local p, want = ARGV[1], ARGV[4]
return page_desc(KEYS[1], ARGV[2], ARGV[3], tonumber(ARGV[5]), tonumber(ARGV[6]), function(id)
  local c = redis.call('HMGET', p .. id, 'head', 'status', 'mid', 'updated_at', 'pix')
  if not c[1] or not c[2] or not c[3] or not c[4] then return nil end
  if want ~= '' and c[2] ~= want then return nil end
  return {id, c[1], c[2], c[3], c[4], c[5] or ''}
end)
