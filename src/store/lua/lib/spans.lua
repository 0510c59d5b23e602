-- bank_read_span: a span [from, to] of a bank's list of Pix (GET /pix, by horario) that a
-- reconciliation of a connection read whole, every page written, merged into `key` (zset
-- "<from ms>-<to ms>" -> from: overlapping or touching spans are one; docs/bank-api.md, "The
-- day's report": a day is complete only where these spans cover it). Spans that ended more
-- than `keep` ms before `now` are dropped, then the oldest beyond `most`; the key lives
-- `keep` after its last write. Returns the number of spans kept.
local function bank_read_span(key, from, to, now, keep, most)
  local spans = {{from, to}}
  for _, m in ipairs(redis.call('ZRANGE', key, 0, -1)) do
    local a, b = string.match(m, '^(%d+)-(%d+)$')
    if a then spans[#spans + 1] = {tonumber(a), tonumber(b)} end
  end
  table.sort(spans, function(x, y) return x[1] < y[1] end)
  local merged = {}
  for _, s in ipairs(spans) do
    local last = merged[#merged]
    if s[2] < s[1] or s[2] < now - keep then
      -- nothing read, or older than what is kept
    elseif last and s[1] <= last[2] then
      if s[2] > last[2] then last[2] = s[2] end
    else
      merged[#merged + 1] = {s[1], s[2]}
    end
  end
  local first = #merged > most and #merged - most + 1 or 1
  redis.call('DEL', key)
  for i = first, #merged do
    local a, b = string.format('%.0f', merged[i][1]), string.format('%.0f', merged[i][2])
    redis.call('ZADD', key, a, a .. '-' .. b)
  end
  if #merged >= first then redis.call('PEXPIRE', key, keep) end
  return #merged - first + 1
end
