-- What ingest would cost Redis with a stream per shard, with the arguments of
-- src/store/lua/ingest.lua (tests/bench/bench.py, the ceiling phase; docs/event-layout.md,
-- "Next: a stream per shard, measured alone"): per notification the upstream id remembered
-- (SET NX GET EX) and, when it is new, ONE XADD to the shard's stream <p>s whose entry is
-- the event itself (id, env, account, type, url, order, created, body): its listing, in
-- time order, and the queue of its first attempt. No hash, no listing index, no due set, no
-- order list. The account's URL is read once per call, as ingest.lua does. Not pixrelay's
-- script: a measure, before anyone rewrites pixrelay for it.
--@include ceiling_stream
return stream_ingest(nil)
