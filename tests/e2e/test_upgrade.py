"""Upgrading: events the previous version wrote (its event layout, written
here key by key with the fields its scripts wrote, docs/event-layout.md)
in a Redis this version then takes over are delivered by this one exactly
once, in order per charge with its own, listed and replayed like its own.
A bank connection by mutual TLS that the previous version made keeps its
webhooks: serve refuses to start without the bank door (bank-listen) that
its bank's certificate now needs, and with it takes the bank's call. An
account's record of before, which names no charging bank connection, gets
its own at its first charge. The reconciliation's schedule, which it kept
per environment, moves into the connections' shards."""
import json
import os
import subprocess
import time
import unittest
import urllib.parse

import bcb
import certs
from harness import (BIN, Pixrelay, Redis, Workdir, acct_key, auth, connect_bank, init_platforms, rkey,
                     shard_of, new_ulid, store_account, wait_for)
from sink import Sink


def old_event(redis, account, order, url, now, state="pending", **extra):
    """An event as the previous version's event_write wrote it (its hash, its
    account's listing index and its order key's list, due when it is the
    list's head); `extra` fields overwrite or add to the hash. Returns its id."""
    id = "evt_" + new_ulid(shard_of(account))
    sp = rkey("", account)[:-len(account)]  # <prefix>{s<k>}:
    host = url.split("://", 1)[1].split("/", 1)[0].lower()
    queue = "sandbox:%s:%s" % (account, host)
    body = json.dumps({"id": id, "event": "EVENT:CHARGE_PAID", "data": {"order": order}},
                      separators=(",", ":"))
    fields = {"id": id, "env": "sandbox", "account": account, "type": "EVENT:CHARGE_PAID",
              "url": url, "queue": queue, "body": body, "order": order, "created_ms": now,
              "updated_ms": now, "next_ms": now, "state": state, "attempts": 0}
    fields.update(extra)
    args = []
    for k, v in fields.items():
        args += [k, str(v)]
    redis.cmd("HSET", rkey("e:", id), *args)
    redis.cmd("ZADD", rkey("a:", account), str(now), id)
    if state in ("pending", "delivering"):
        if redis.cmd("RPUSH", sp + "o:" + order, id) == 1 and state == "pending":
            redis.cmd("ZADD", sp + "due:" + queue, str(now), id)
            redis.cmd("ZADD", sp + "hosts", "LT", str(now), queue)
    return id


class Upgrade(unittest.TestCase):
    def test_events_of_the_previous_layout(self):
        wd = Workdir()
        redis = Redis(wd.path).start()
        sink = Sink().start()
        # not dispatching while the previous version's events are written
        px = Pixrelay(wd.path, redis, args=["--dispatch", "0"]).start()
        try:
            px.wait_ready()
            account = json.loads(px.cli("init", "--json").stdout)["sandbox"]["account"]
            key = px.create_key("sandbox")["key"]
            url = sink.url("/hook")
            px.cli("account", "set", "--env", "sandbox", "--postback-url", url)
            sp = rkey("", account)[:-len(account)]  # <prefix>{s<k>}:
            now = int(time.time() * 1000) - 60000

            # a charge with an event of the previous version queued
            r = px.request("POST", "/v1/charge/pix/create", body={"amount": 700}, headers=auth(key))
            self.assertEqual(r.status, 200, r)
            cid = r.json["data"]["id"]
            a0 = old_event(redis, account, cid, url, now)
            # three events of one order, the first due
            x = [old_event(redis, account, "ch_x", url, now + i) for i in range(3)]
            # one leased by a process of the previous version that died: its lease ran out
            b1 = old_event(redis, account, "ch_b", url, now + 10, state="delivering",
                           token="01OLDPROCESS.7", attempts=1, updated_ms=now + 20)
            redis.cmd("ZADD", sp + "lease", str(now + 30), b1)
            b2 = old_event(redis, account, "ch_b", url, now + 11)
            # alone
            c1 = old_event(redis, account, "ch_c", url, now + 12)
            # delivered, kept for the retention
            d1 = old_event(redis, account, "ch_d", url, now + 13, state="delivered", attempts=1,
                           delivered_ms=now + 14, updated_ms=now + 14, last_status=200,
                           last_error="", attempt='{"at":"x","status":200}')
            redis.cmd("EXPIRE", rkey("e:", d1), "86400")

            # this version takes over a Redis of the previous one (its layout marker
            # says 2): `serve` starting marks it 3, so that the previous version
            # refuses it, and nothing else (no `pixrelay init`, keys.c); the lease
            # looks for the previous version's order lists until none can be left
            # (p v3), so the charge's payment event it writes (into the shard's
            # stream) waits behind the previous version's
            redis.cmd("SET", "pixrelay:{meta}:layout", "2")
            px.stop()
            px = Pixrelay(wd.path, redis, args=["--dispatch", "0"]).start()
            px.wait_ready()
            self.assertEqual(redis.cmd("GET", "pixrelay:{meta}:layout"), "3")
            self.assertEqual(redis.cmd("EXISTS", sp + "v3"), 0)
            r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(key))
            self.assertEqual(r.status, 200, r)
            events = px.request("GET", "/v1/events?limit=100", headers=auth(key)).json["data"]["events"]
            a1 = [e["id"] for e in events if e["id"] not in [a0, b1, b2, c1, d1] + x][0]
            self.assertEqual(redis.cmd("EXISTS", rkey("e:", a1)), 0)

            listed = {e["id"]: e for e in
                      px.request("GET", "/v1/events?limit=100", headers=auth(key)).json["data"]["events"]}
            self.assertEqual({i: listed[i]["state"] for i in [a0, a1, b1, b2, c1, d1] + x},
                             dict({a0: "pending", a1: "pending", b1: "delivering", b2: "pending",
                                   c1: "pending", d1: "delivered"}, **{i: "pending" for i in x}))
            self.assertEqual(listed[b1]["attempts"], 1)
            self.assertEqual(sink.count(), 0)

            px.stop()
            px = Pixrelay(wd.path, redis).start()
            px.wait_ready()
            pending = [a0, a1, b1, b2, c1] + x
            sink.wait_until(lambda reqs: {q.webhook_id for q in reqs} >= set(pending),
                            timeout=30, what="every pending event")

            def settled():
                ev = {e["id"]: e for e in
                      px.request("GET", "/v1/events?limit=100", headers=auth(key)).json["data"]["events"]}
                return ev if all(ev[i]["state"] == "delivered" for i in pending) else None
            listed = wait_for(settled, what="every event listed as delivered")
            time.sleep(0.5)
            got = [q.webhook_id for q in sink.requests("/hook")]
            # exactly once, in order per charge
            self.assertEqual(sorted(got), sorted(pending))
            for order in ([a0, a1], x, [b1, b2]):
                self.assertEqual([i for i in got if i in order], order)
            for i in pending:
                self.assertEqual(listed[i]["attempts"], 2 if i == b1 else 1, i)
                self.assertEqual(listed[i]["lastStatus"], 200, i)
            self.assertEqual(listed[d1]["state"], "delivered")
            # the order keys' lists are gone with their events
            for order in (cid, "ch_x", "ch_b", "ch_c"):
                self.assertEqual(redis.cmd("EXISTS", sp + "o:" + order), 0, order)

            # the delivered one of the previous version is replayed and delivered again
            r = px.request("POST", "/v1/events/%s/replay" % d1, headers=auth(key))
            self.assertEqual(r.status, 200, r)
            sink.wait_count(1, webhook_id=d1, timeout=15)
            d = wait_for(lambda: (lambda j: j if j["state"] == "delivered" else None)(
                px.request("GET", "/v1/events/" + d1, headers=auth(key)).json["data"]),
                what="the replayed event delivered")
            self.assertEqual(d["attempts"], 2)
            self.assertEqual([a["status"] for a in d["attemptLog"]], [200, 200])
            self.assertEqual(sink.count(webhook_id=d1), 1)
        finally:
            px.stop()
            sink.close()
            redis.stop()
            wd.cleanup()


    def test_events_of_the_version_before_endpoints(self):
        """Events the version before webhook endpoints wrote (stream entries of two
        fields, m and b, with their queue counts and listing; a hash of its own;
        an account record without the field fanout) are delivered as they were,
        to their postbackUrl only, exactly once and in order, once this version
        runs and the account has an endpoint; the events made after go to both
        (docs/event-layout.md, "Endpoints")."""
        wd = Workdir()
        redis = Redis(wd.path).start()
        sink = Sink().start()
        px = Pixrelay(wd.path, redis, args=["--dispatch", "0"]).start()
        try:
            px.wait_ready()
            account = json.loads(px.cli("init", "--json").stdout)["sandbox"]["account"]
            key = px.create_key("sandbox")["key"]
            url = sink.url("/hook")
            px.cli("account", "set", "--env", "sandbox", "--postback-url", url)
            sp = rkey("", account)[:-len(account)]  # <prefix>{s<k>}:
            host = url.split("://", 1)[1].split("/", 1)[0]
            queue = "sandbox:%s:%s" % (account, host)
            old = []
            for order in ("ch_up1", "ch_up1", "ch_up2"):
                eid = "evt_" + new_ulid(shard_of(account))
                body = json.dumps({"id": eid, "event": "EVENT:CHARGE_PAID",
                                   "data": {"order": order}}, separators=(",", ":"))
                sid = redis.cmd("XADD", sp + "s", "*", "m", "\n".join(
                    [order, queue, eid, "sandbox", account, "EVENT:CHARGE_PAID", url]), "b", body)
                redis.cmd("HINCRBY", sp + "qn", queue, 1)
                redis.cmd("ZADD", rkey("a:", account), sid.split("-")[0], eid)
                old.append(eid)
            old.append(old_event(redis, account, "ch_up3", url, int(time.time() * 1000)))
            self.assertEqual(redis.cmd("HEXISTS", acct_key("sandbox", account), "fanout"), 0)

            # this version, and an endpoint made before it delivers anything
            r = px.request("POST", "/v1/webhook-endpoints", body={"url": sink.url("/ep")},
                           headers=auth(key))
            self.assertEqual(r.status, 200, r)
            ep = r.json["data"]["id"]
            px.stop()
            px = Pixrelay(wd.path, redis).start()
            px.wait_ready()
            sink.wait_until(lambda reqs: {q.webhook_id for q in reqs} >= set(old), timeout=20,
                            what="the events of before")
            r = px.request("POST", "/v1/charge/pix/create", body={"amount": 700}, headers=auth(key))
            cid = r.json["data"]["id"]
            r = px.request("POST", "/v1/charge/pix/%s/simulate-payment" % cid, headers=auth(key))
            new = r.header("X-Event-Id")
            sink.wait_count(1, path="/ep")
            sink.wait_until(lambda reqs: new in {q.webhook_id for q in sink.requests("/hook")},
                            what="the new event's postback")
            time.sleep(0.5)
            got = [q.webhook_id for q in sink.requests("/hook")]
            self.assertEqual(sorted(got), sorted(old + [new]))
            self.assertEqual([i for i in got if i in old[:2]], old[:2])
            self.assertEqual([q.webhook_id for q in sink.requests("/ep")], [new])

            def listed():
                ev = {e["id"]: e for e in
                      px.request("GET", "/v1/events?limit=100", headers=auth(key)).json["data"]["events"]}
                return ev if all(ev[i]["state"] == "delivered" for i in old + [new]) else None
            listed = wait_for(listed, what="every event listed as delivered")
            for i in old:
                self.assertNotIn("endpoints", listed[i], i)
            self.assertEqual([d["endpoint"] for d in listed[new]["endpoints"]], [ep])
            # replayed as before: to its postbackUrl
            r = px.request("POST", "/v1/events/%s/replay" % old[0], headers=auth(key))
            self.assertEqual(r.json["data"], {"id": old[0], "requeued": True})
            sink.wait_count(2, path="/hook", webhook_id=old[0])
        finally:
            px.stop()
            sink.close()
            redis.stop()
            wd.cleanup()

    def test_bank_connections_of_the_previous_version(self):
        """An account's record as the previous version left it (no charge_via:
        it knew no charging connection) with the connections it made: its
        charges find the charging connection at once (docs/banks.md, "The key
        on the QR")."""
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis).start()

        def as_before(account, conns):
            redis.cmd("HDEL", acct_key("sandbox", account), "charge_via", "charge_key")
            for c in conns:
                redis.cmd("HDEL", rkey("bank:", c["id"]), "default")

        def charge(key):
            return px.request("POST", "/v1/charge/pix/create", body={"amount": 700}, headers=auth(key))

        def key_of(code):
            return json.loads(px.cli("brcode", "decode", code).stdout)["merchantAccount"]["key"]

        try:
            px.wait_ready()
            px.cli("init")
            # one connection: its key, no longer the account's own
            one, one_key = store_account(redis, px, "Uma")
            c = connect_bank(px, "sandbox", one, chave="uma@loja.example")
            as_before(one, [c])
            r = charge(one_key)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(key_of(r.json["data"]["brCode"]), "uma@loja.example")
            self.assertEqual(redis.cmd("HGET", acct_key("sandbox", one), "charge_via"), c["id"])
            # two, none marked: which one is not guessed
            two, two_key = store_account(redis, px, "Duas")
            cs = [connect_bank(px, "sandbox", two, chave="d%d@loja.example" % i) for i in range(2)]
            as_before(two, cs)
            self.assertEqual(charge(two_key).status, 409)
            # none (store_account writes what the previous version read): its own key
            none, none_key = store_account(redis, px, "Nenhuma")
            r = charge(none_key)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(key_of(r.json["data"]["brCode"]),
                             redis.cmd("HGET", acct_key("sandbox", none), "pix_key"))
            self.assertEqual(redis.cmd("HGET", acct_key("sandbox", none), "charge_via"), "none")
        finally:
            px.stop()
            redis.stop()
            wd.cleanup()

    def test_an_mtls_connection_of_the_previous_version_needs_the_bank_door(self):
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis).start()
        try:
            px.wait_ready()
            account = init_platforms(px)["production"]
            key = px.create_key("production")["key"]
            px.stop()
            d = os.path.join(wd.path, "certs")
            ca = certs.make_ca(d, "bank-ca", "Test Bank Webhook CA")
            with open(ca.cert) as f:
                ca_pem = f.read()
            with open(certs.make_client(d, ca, "bank", "webhook.bank.example").cert) as f:
                cert = urllib.parse.quote(f.read(), safe="")
            # the connection as the previous version's bank_connect wrote it
            # (its hash, its account's index, the environment's index)
            conn = "bnk_" + new_ulid(shard_of(account))
            now = str(int(time.time() * 1000))
            redis.cmd("HSET", rkey("bank:", conn), "id", conn, "account", account, "env", "production",
                      "pix_key", "pagamentos@loja.example", "auth", "mtls", "client_ca", ca_pem,
                      "token_sha", "", "created_ms", now)
            redis.cmd("ZADD", rkey("banks:", account), now, conn)
            redis.cmd("ZADD", "pixrelay:{production}:banks", now, conn)

            # without the door: refused, saying why and where to read
            p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--redis", redis.url,
                                "--data-dir", os.path.join(wd.path, "d")],
                               capture_output=True, text=True, timeout=20)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(
                "error bank connection %s (production) authenticates its bank by mutual TLS, and "
                "bank-listen is not set: no bank's client certificate can reach pixrelay without it: "
                "set bank-listen and send the proxy's bank webhooks there (docs/deployment.md, "
                "\"The bank door\")\n" % conn, p.stderr)
            self.assertNotIn("listening on", p.stderr)

            # with it: the bank's call through the door is taken
            px = Pixrelay(wd.path, redis, door=True).start()
            px.wait_ready()
            body = {"pix": [{"endToEndId": "E12345678" + time.strftime("%Y%m%d%H%M", time.gmtime())
                             + "upgrade0001", "valor": "12.34",
                             "horario": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}
            bcb.validate_webhook_body(body)
            r = px.door_request("POST", "/v1/webhooks/bank/%s/pix" % conn, body=body,
                                headers={"X-Client-Cert": cert})
            self.assertEqual(r.status, 200, r)
            self.assertEqual((r.json["data"]["accepted"], r.json["data"]["pix"][0]["outcome"]),
                             (1, "unmatched"))
            r = px.request("GET", "/v1/bank/connections/%s/notifications" % conn, headers=auth(key))
            self.assertEqual([n["endToEndId"] for n in r.json["data"]["notifications"]],
                             [body["pix"][0]["endToEndId"]])
        finally:
            px.stop()
            redis.stop()
            wd.cleanup()


    def test_the_reconciliation_schedule_of_the_previous_version_moves_into_the_shards(self):
        wd = Workdir()
        redis = Redis(wd.path).start()
        px = Pixrelay(wd.path, redis)
        try:
            # the previous version kept it per environment: due (or leased
            # until) and last success, by connection
            later = int(time.time() * 1000) + 3600 * 1000
            a, b, c = ("bnk_" + new_ulid() for _ in range(3))
            redis.cmd("ZADD", "pixrelay:{sandbox}:bankrec", str(later), a, str(later + 1), c,
                      "0", "not-a-connection")
            redis.cmd("ZADD", "pixrelay:{sandbox}:bankok", "1700000000000", a)
            redis.cmd("ZADD", "pixrelay:{production}:bankrec", str(later + 2), b)
            redis.cmd("ZADD", "pixrelay:{production}:bankok", "1700000000002", b)
            # a process of this version scheduled c already: its entry stays
            redis.cmd("ZADD", "pixrelay:{s%d}:bankrec" % shard_of(c), str(later + 9), c)
            px.start()
            px.wait_ready()
            sched = lambda id: redis.cmd("ZSCORE", "pixrelay:{s%d}:bankrec" % shard_of(id), id)
            ok = lambda id, env: redis.cmd("ZSCORE", "pixrelay:{s%d}:bankok:%s" % (shard_of(id), env),
                                           id)
            self.assertEqual([sched(a), sched(b), sched(c)],
                             [str(later), str(later + 2), str(later + 9)])
            self.assertEqual([ok(a, "sandbox"), ok(b, "production")],
                             ["1700000000000", "1700000000002"])
            for env in ("sandbox", "production"):
                for k in ("bankrec", "bankok"):
                    self.assertEqual(redis.cmd("EXISTS", "pixrelay:{%s}:%s" % (env, k)), 0)
        finally:
            px.stop()
            redis.stop()
            wd.cleanup()


if __name__ == "__main__":
    unittest.main(verbosity=2)
