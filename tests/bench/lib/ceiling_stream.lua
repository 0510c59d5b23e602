-- The loop both stream ceilings share (ceiling_stream.lua, ceiling_stream_order.lua): per
-- notification the upstream id remembered and, when new, one XADD of the event to the
-- shard's stream; then `after` (if any) with the shard prefix, the order key and the event
-- id. Returns the answers, one per notification.
local function stream_ingest(after)
  local p, now, ttl = ARGV[1], ARGV[2], ARGV[4]
  local urls = {}
  local out = {}
  -- (runs of one account's notifications: its head, then 5 values each; the event's id,
  -- env, account and type are written as ingest.lua's arguments carry them, in one value)
  local a = 5
  while a <= #ARGV do
    local env, account = string.match(ARGV[a], '^([^\n]*)\n(.*)$')
    local n = tonumber(ARGV[a + 1])
    a = a + 2
    for _ = 1, n do
      local evt, order = ARGV[a + 1], ARGV[a + 2]
      local seen = redis.call('SET', ARGV[a], evt, 'NX', 'GET', 'EX', ttl)
      if not seen then
        local ak = p .. 'acct:' .. env .. ':' .. account
        local url = urls[ak]
        if not url then
          url = redis.call('HGET', ak, 'postback_url') or ''
          urls[ak] = url
        end
        redis.call('XADD', p .. 's', '*', 'event', ARGV[a + 3], 'url', url, 'order', order,
          'created', now, 'body', ARGV[a + 4])
        if after then after(p, order, evt) end
      end
      out[#out + 1] = seen and 'duplicate' or 'relayed'
      a = a + 5
    end
  end
  return out
end
