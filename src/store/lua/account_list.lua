-- account_list: a page of the accounts of an environment, newest first (ids only: each
-- account's record lives in its own shard).
-- KEYS[1] = <prefix>{<env>}:accounts   zset account id -> created ms
-- ARGV = max created ms ('+inf' = from the newest), id to start below at exactly that
--        time ('' = none), limit
-- Returns the ids of the page, then the resume point (page_desc).
--@include page
if #KEYS ~= 1 or #ARGV ~= 3 then
  return redis.error_reply('ERR account_list: wants 1 keys and 3 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
return page_desc(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[3]) + 1, function(id)
  return {id}
end)
