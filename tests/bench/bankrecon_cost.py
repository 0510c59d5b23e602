#!/usr/bin/env python3
"""What one reconciliation run of a bank connection costs in Redis
(docs/performance.md, "A reconciliation run"): the commands pixrelay sends
per run, by what they are, counted with MONITOR (those a script runs left
out). Not a CI test: it prints figures.

    python3 tests/bench/bankrecon_cost.py [--bin build/pixrelay] [--runs 4]

What runs: a redis-server, pixrelay (serve, --bank-reconcile-interval 5)
and the tests' bank (tests/e2e/testbank.py), all on this machine. One
connection with the bank's API credentials; before each run the bank
settles one Pix to its key that nobody tells pixrelay of, so that each run
reads one page with one Pix (a window of one page, no pending refund). The
claims that lease nothing, which a process makes every second whatever is
due, are counted apart: per second, not per run.
"""
import argparse
import collections
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, HERE)

from bankhook_cost import Monitor  # noqa: E402


def kind(cmd, words):
    """What a command sent during reconciliation is: a name for the table."""
    key = words[3] if cmd == "EVALSHA" and len(words) > 3 else (words[1] if len(words) > 1 else "")
    tail = key.split("}:", 1)[1] if "}:" in key else key
    name = tail.split(":", 1)[0]
    if cmd == "EVALSHA" and name == "bankrec":
        nkeys = int(words[2])
        return "bank_recon " + words[3 + nkeys]  # its action
    if cmd == "EVALSHA" and tail == "bank":
        return "bank_pix"
    if cmd == "EVALSHA" and name == "bank":
        # a script on the connection's record: by its keys and first argument
        nkeys = int(words[2])
        if nkeys == 5:
            return "bank_recon_done"
        if nkeys == 2 and ":bread:" in words[4]:
            return "bank_recon_read"
        if nkeys == 1 and len(words) > 4 and words[4].startswith("bnk_"):
            return "bank_recon_done"
        return "bank_note_api or bank_last_call"
    if cmd == "EVALSHA":
        return "script on " + name
    return "%s %s" % (cmd, name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None)
    ap.add_argument("--runs", type=int, default=4)
    a = ap.parse_args()
    if a.bin:
        os.environ["PIXRELAY_BIN"] = os.path.abspath(a.bin)
    import certs
    from harness import Pixrelay, Redis, Workdir, init_platforms, shard_of, wait_for
    from testbank import TestBank

    wd = Workdir()
    redis = Redis(wd.path).start()
    px = Pixrelay(wd.path, redis, args=["--bank-reconcile-interval", "5"]).start()
    d = os.path.join(wd.path, "certs")
    os.makedirs(d)
    ca = certs.make_ca(d, "merchant-ca", "Loja Client CA")
    merchant = certs.make_client(d, ca, "loja", "loja.example")
    bank = TestBank(client_ca=ca.cert, keys=["custo@loja.example"]).start()
    try:
        px.wait_ready()
        init_platforms(px)
        secret = os.path.join(d, "secret.txt")
        with open(secret, "w") as f:
            f.write(bank.client_secret)
        os.chmod(secret, 0o600)
        conn = json.loads(px.cli(
            "bank", "connect", "--env", "sandbox", "--chave", bank.key, "--url-token",
            "--api-url", bank.url, "--token-url", bank.token_url, "--client-id", bank.client_id,
            "--client-secret-file", secret, "--cert", merchant.cert, "--key", merchant.key,
            "--bank-ca", bank.server_ca, "--json").stdout)
        wait_for(lambda: "loaded: bank connections' API calls are on" in px.log(),
                 what="the credentials key taken by the server")

        def runs_done():
            v = redis.cmd("HGET", "pixrelay:{s%d}:bank:%s" % (shard_of(conn["id"]), conn["id"]),
                          "rec_ok_ms")
            return v

        # the first run (a token fetched, the first window) is not counted
        first = wait_for(runs_done, timeout=20, what="the first run")
        mon = Monitor(redis.sock)
        mon.start()
        time.sleep(0.5)
        mon.take()
        mon.on = True
        t0, last = time.time(), first
        for i in range(a.runs):
            bank.pay_key("1.%02d" % (i + 1))
            last = wait_for(lambda: runs_done() != last and runs_done(), timeout=20,
                            what="a run")
        mon.on = False
        wall = time.time() - t0
        counts = collections.Counter()
        for (cmd, words), n in mon.take_raw().items():
            counts[kind(cmd, list(words))] += n
        idle = counts.pop("bank_recon claim", 0)
        print("%d runs of one page, one Pix, no pending refund, in %.1f s" % (a.runs, wall))
        per_run = {k: n / a.runs for k, n in counts.items()
                   if k.startswith(("bank_recon", "bank_pix", "HGETALL bank", "ZRANGE bref",
                                    "ZREM bref", "script on bank"))}
        for k, v in sorted(per_run.items(), key=lambda kv: -kv[1]):
            print("  %-28s %.2f a run" % (k, v))
        print("  %-28s %.2f a run, of %.1f a second (every shard or environment, every tick)"
              % ("bank_recon claim", idle / a.runs, idle / wall))
        print("total: %.2f round trips a run, the claim that leased it included"
              % (sum(per_run.values()) + 1))
    finally:
        px.stop()
        bank.close()
        redis.stop()
        wd.cleanup()


if __name__ == "__main__":
    main()
