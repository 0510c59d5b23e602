-- ceiling_stream.lua and per-charge order: what ingest would cost Redis with a stream per
-- shard when each event also marks its charge busy in a per-shard hash of the orders with
-- an event in flight (HSETNX <p>busy <order> <event id>; a later event of a busy charge
-- waits in its order list, which the dispatcher reads when the one in flight settles: a
-- path the benchmark's events, one per charge, almost never take).
-- Same arguments as src/store/lua/ingest.lua (tests/bench/bench.py, the ceiling phase).
--@include ceiling_stream
return stream_ingest(function(p, order, evt)
  if redis.call('HSETNX', p .. 'busy', order, evt) == 0 then
    -- its charge is busy: it waits behind the one in flight
    redis.call('RPUSH', p .. 'o:' .. order, evt)
  end
end)
