-- page_desc: one page of the zset `key` (members by time, as scores), newest first.
-- It starts at score `maxs` ('+inf' = the newest); members of exactly that score that are
-- >= `after` ('' = none) were on the previous page and are skipped (equal scores come in
-- reverse member order). fetch(id, score) returns the values to put in the page for a
-- member, or nil to leave it out (a filter, or a record that is gone). At most `cap`
-- members are looked at, so a filter that matches little still costs a bounded amount.
-- Returns the flat list of values of at most `limit` members, then the resume point: the
-- score and id of the last member looked at before the page ended, or '' and '' when the
-- zset has nothing more (a member matching after a full page proves there is more).
local function page_desc(key, maxs, after, limit, cap, fetch)
  local out, found, seen, offset = {}, 0, 0, 0
  local last_score, last_id = '', ''
  local function finish(more)
    if more then
      out[#out + 1], out[#out + 2] = last_score, last_id
    else
      out[#out + 1], out[#out + 2] = '', ''
    end
    return out
  end
  while true do
    local ids = redis.call('ZREVRANGEBYSCORE', key, maxs, '-inf', 'WITHSCORES', 'LIMIT', offset, 100)
    if #ids == 0 then return finish(false) end
    for i = 1, #ids, 2 do
      local id, score = ids[i], ids[i + 1]
      offset = offset + 1
      if not (after ~= '' and score == maxs and id >= after) then
        local v = fetch(id, score)
        if v then
          if found == limit then return finish(true) end
          for _, x in ipairs(v) do out[#out + 1] = x end
          found = found + 1
        end
        last_score, last_id = score, id
        seen = seen + 1
        if seen >= cap then return finish(true) end
      end
    end
  end
end
