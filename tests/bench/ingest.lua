-- wrk script for POST /v1/webhooks/ingest/{accountId} (tests/bench/run.sh).
--
-- Environment: BENCH_ACCOUNT (account id, or several separated by commas,
-- taken in turn), BENCH_SECRET (their ingest secret,
-- sent as the header `signature`), BENCH_TAG (makes ids unique per run and
-- phase), BENCH_OUT (file that receives the results).
--
-- Every request carries a fresh upstream notification id and a fresh upstream
-- charge id (so no two events share a delivery order key). Only 200 answers
-- count as acknowledged; the event id of each acknowledged notification is
-- kept and written to BENCH_OUT.acked, one per line, for the loss check.

local account = os.getenv("BENCH_ACCOUNT") or error("BENCH_ACCOUNT is not set")
local secret = os.getenv("BENCH_SECRET") or error("BENCH_SECRET is not set")
local tag = os.getenv("BENCH_TAG") or "bench"
local out = os.getenv("BENCH_OUT") or "/dev/stdout"
-- BENCH_QUOTA > 0: each thread stops after that many 200 answers (the
-- end-to-end phase sends a fixed number of events; wrk itself still waits
-- out its -d duration)
local quota = tonumber(os.getenv("BENCH_QUOTA") or "0") or 0

local threads = {}
local nthreads = 0

function setup(thread)
  nthreads = nthreads + 1
  thread:set("tid", nthreads)
  table.insert(threads, thread)
end

function init(args)
  sent = 0
  ok = 0
  other = 0
  dup = 0
  acked = {}
  paths = {}
  for a in string.gmatch(account, "[^,]+") do
    paths[#paths + 1] = "/v1/webhooks/ingest/" .. a
  end
  headers = { ["Content-Type"] = "application/json", ["signature"] = secret }
  prefix = tag .. "-" .. tid .. "-"
  -- about 1 KB per notification, as a provider's usually are
  pad = string.rep("x", 1024 - 250)
end

function request()
  sent = sent + 1
  local id = prefix .. sent
  local body = '{"id":"up-' .. id .. '","event":"EVENT:CHARGE_PAID","data":{"id":"ch-' .. id
    .. '","value":1990,"status":"PAID","paidAt":"2026-01-01T00:00:00Z",'
    .. '"customer":{"name":"Bench Customer","email":"bench@example.com"},"note":"' .. pad .. '"}}'
  return wrk.format("POST", paths[sent % #paths + 1], headers, body)
end

function response(status, hdrs, body)
  if status == 200 then
    ok = ok + 1
    if string.find(body, '"duplicate":true', 1, true) then
      dup = dup + 1
    end
    local e = string.match(body, '"event":"(evt_[0-9A-Za-z]+)"')
    if e then
      acked[#acked + 1] = e
    end
    if quota > 0 and ok >= quota then
      wrk.thread:stop()
    end
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local t_ok, t_other, t_dup, t_sent = 0, 0, 0, 0
  local f = assert(io.open(out .. ".acked", "w"))
  for _, t in ipairs(threads) do
    t_ok = t_ok + t:get("ok")
    t_other = t_other + t:get("other")
    t_dup = t_dup + t:get("dup")
    t_sent = t_sent + t:get("sent")
    local a = t:get("acked")
    for i = 1, #a do
      f:write(a[i], "\n")
    end
  end
  f:close()
  local r = assert(io.open(out, "w"))
  local secs = summary.duration / 1e6
  r:write(string.format("duration_s=%.3f\n", secs))
  r:write(string.format("requests=%d\n", summary.requests))
  r:write(string.format("sent=%d\n", t_sent))
  r:write(string.format("ok=%d\n", t_ok))
  r:write(string.format("other=%d\n", t_other))
  r:write(string.format("duplicates=%d\n", t_dup))
  r:write(string.format("errors_connect=%d\n", summary.errors.connect))
  r:write(string.format("errors_read=%d\n", summary.errors.read))
  r:write(string.format("errors_write=%d\n", summary.errors.write))
  r:write(string.format("errors_timeout=%d\n", summary.errors.timeout))
  r:write(string.format("errors_status=%d\n", summary.errors.status))
  r:write(string.format("ok_per_s=%.1f\n", t_ok / secs))
  -- wrk's latencies are in microseconds; every request is counted here, which
  -- is every 200 when no other status and no error was seen
  r:write(string.format("lat_mean_ms=%.3f\n", latency.mean / 1000))
  r:write(string.format("lat_p50_ms=%.3f\n", latency:percentile(50) / 1000))
  r:write(string.format("lat_p90_ms=%.3f\n", latency:percentile(90) / 1000))
  r:write(string.format("lat_p99_ms=%.3f\n", latency:percentile(99) / 1000))
  r:write(string.format("lat_max_ms=%.3f\n", latency.max / 1000))
  r:close()
end
