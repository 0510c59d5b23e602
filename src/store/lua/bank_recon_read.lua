-- bank_recon_read: a span of the bank's list of Pix (GET /pix, by horario) that a
-- reconciliation of a connection read whole, every page written (docs/bank-api.md, "The day's
-- report": a day is complete only where these spans cover it).
-- KEYS[1] = <prefix>{s<k>}:bank:<id>, KEYS[2] = <prefix>{s<k>}:bread:<id>
--   bread: zset "<from ms>-<to ms>" -> from, the spans read, merged (overlapping or touching
--   spans are one)
-- ARGV = id, from (ms), to (ms), now (ms), keep (ms: the event retention), most (spans kept)
-- Spans that ended more than `keep` ago are dropped, then the oldest beyond `most`; the key
-- lives `keep` after its last write. Nothing is written for a connection removed meanwhile.
-- Returns the number of spans kept, or -1 when the connection is gone.
if #KEYS ~= 2 or #ARGV ~= 6 then
  return redis.error_reply('ERR bank_recon_read: wants 2 keys and 6 arguments, got ' .. #KEYS .. ' and ' .. #ARGV)
end
if redis.call('HGET', KEYS[1], 'id') ~= ARGV[1] then return -1 end
local from, to, now = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local keep, most = tonumber(ARGV[5]), tonumber(ARGV[6])
local spans = {{from, to}}
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
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
redis.call('DEL', KEYS[2])
for i = first, #merged do
  local a, b = string.format('%.0f', merged[i][1]), string.format('%.0f', merged[i][2])
  redis.call('ZADD', KEYS[2], a, a .. '-' .. b)
end
if #merged >= first then redis.call('PEXPIRE', KEYS[2], keep) end
return #merged - first + 1
