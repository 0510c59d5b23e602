#!/usr/bin/env python3
"""What one payment provider's notification costs pixrelay
(docs/performance.md), beside a bank's webhook call in the same run: Redis
round trips, pixrelay's CPU and the calls to the provider per notification,
for Woovi (RSA signature, then the payment read back), Asaas (the token,
then the payment read back) and Mercado Pago (x-signature with the secret
opened per call, then the payment read back), and for a bank connection
with a URL token (bankhook_cost.py's baseline). Not a CI test: it prints
figures, each provider's as a ratio to the bank's.

    python3 tests/bench/provhook_cost.py [--bin build/pixrelay] [--calls 500]

What runs: a redis-server, pixrelay (serve, with a bank door) and the tests'
providers (tests/e2e/testwoovi.py, testasaas.py, testmp.py), all on this
machine. Each provider's notification is of a paid charge, the same one
every time after the first (a duplicate: its write deduplicates it and moves
nothing, so no postback runs beside the calls); the read-back runs each
time (it is the guard).
"""
import argparse
import json
import os
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, HERE)

from bankhook_cost import Monitor, measure  # noqa: E402


def secret_file(wd, name, text):
    path = os.path.join(wd, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None)
    ap.add_argument("--calls", type=int, default=500)
    a = ap.parse_args()
    if a.bin:
        os.environ["PIXRELAY_BIN"] = os.path.abspath(a.bin)
    import accountdata
    from harness import Pixrelay, Redis, Workdir, auth, init_platforms, store_account
    from testasaas import TestAsaas
    from testmp import TestMP, x_signature
    from testwoovi import TestWoovi

    wd = Workdir()
    redis = Redis(wd.path).start()
    px = Pixrelay(wd.path, redis, door=True).start()
    servers = []
    try:
        px.wait_ready()
        account = init_platforms(px)["sandbox"]
        key = px.create_key("sandbox", account=account)["key"]
        r = px.request("POST", "/v1/bank/connections",
                       body={"pixKey": "cost-token@loja.example", "auth": "url-token"},
                       headers=auth(key))
        assert r.status == 200, (r.status, r.body)
        bank = r.json["data"]
        cases = []

        # the bank's baseline: one Pix a call, a duplicate after the first
        e2e = "E12345678" + time.strftime("%Y%m%d%H%M", time.gmtime()) + "costcost001"
        pix = {"pix": [{"endToEndId": e2e, "valor": "1.00",
                        "horario": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())}]}
        url = urllib.parse.urlsplit(bank["webhookUrl"])
        cases.append(("bank (url-token)", url.path + "/pix?" + url.query, pix, {}, None, None))

        def provider_account(name):
            acct, k = store_account(redis, px, name)
            return acct, k

        # Woovi
        wv = TestWoovi().start()
        servers.append(wv)
        acct, k = provider_account("Custo Woovi")
        tok = secret_file(wd.path, "wv", wv.app_id)
        conn = json.loads(px.cli("bank", "connect", "--provider", "woovi", "--env", "sandbox",
                                 "--account", acct, "--api-token-file", tok, "--api-url", wv.url,
                                 "--api-ca", wv.server_ca, "--json").stdout)
        wv.auto_notify = False
        r = px.request("POST", "/v1/charge/pix/create", body={"amount": 500}, headers=auth(k))
        assert r.status == 200, r
        wv.pay(r.json["data"]["id"])
        body = json.dumps(wv.notification_body("OPENPIX:CHARGE_COMPLETED",
                                               charge=r.json["data"]["id"])).encode()
        sig = wv._sender._signature(body)
        cases.append(("woovi", urllib.parse.urlsplit(conn["webhookUrl"]).path, body,
                      {"x-webhook-signature": sig, "Content-Type": "application/json"}, wv, "GET /api/v1/transaction/{id}"))

        # Asaas
        asa = TestAsaas().start()
        servers.append(asa)
        acct, k = provider_account("Custo Asaas")
        token = "cost-webhook-token-" + "z" * 20
        conn = json.loads(px.cli("bank", "connect", "--provider", "asaas", "--env", "sandbox",
                                 "--account", acct, "--api-token-file",
                                 secret_file(wd.path, "as", asa.api_key), "--webhook-secret-file",
                                 secret_file(wd.path, "ast", token), "--api-url", asa.url,
                                 "--api-ca", asa.server_ca, "--json").stdout)
        asa.auto_notify = False
        r = px.request("POST", "/v1/charge/pix/create",
                       body={"amount": 500, "document": accountdata.cpf(), "name": "Custo"},
                       headers=auth(k))
        assert r.status == 200, r
        pay = asa.pay(r.json["data"]["id"])
        body = {"id": "evt_cost", "event": "PAYMENT_RECEIVED",
                "dateCreated": time.strftime("%Y-%m-%d %H:%M:%S"),
                "payment": {"object": "payment", "id": pay["id"]}}
        cases.append(("asaas", urllib.parse.urlsplit(conn["webhookUrl"]).path, body,
                      {"asaas-access-token": token}, asa, "GET /v3/payments/{id}"))

        # Mercado Pago
        mp = TestMP().start()
        servers.append(mp)
        acct, k = provider_account("Custo MP")
        conn = json.loads(px.cli("bank", "connect", "--provider", "mercadopago", "--env",
                                 "sandbox", "--account", acct, "--api-token-file",
                                 secret_file(wd.path, "mp", mp.access_token),
                                 "--webhook-secret-file", secret_file(wd.path, "mps", mp.secret),
                                 "--api-url", mp.url, "--api-ca", mp.server_ca,
                                 "--json").stdout)
        mp.auto_notify = False
        r = px.request("POST", "/v1/charge/pix/create",
                       body={"amount": 500, "email": "custo@loja.example"}, headers=auth(k))
        assert r.status == 200, r
        pid = [p for p in mp.payments if p.get("external_reference") == r.json["data"]["id"]][0]
        mp.pay(pid["id"])
        data_id = str(pid["id"])
        ts = str(int(time.time()))
        body = {"id": 1, "live_mode": False, "type": "payment", "action": "payment.updated",
                "data": {"id": data_id}}
        cases.append(("mercadopago", urllib.parse.urlsplit(conn["webhookUrl"]).path +
                      "?data.id=%s&type=payment" % data_id, body,
                      {"x-request-id": "cost-1",
                       "x-signature": x_signature(mp.secret, data_id, "cost-1", ts)},
                      mp, "GET /v1/payments/{id}"))

        mon = Monitor(redis.sock)
        mon.start()
        print("%d calls each, a duplicate after the first (the provider's read-back runs "
              "each time)" % a.calls)
        base = None
        for name, path, body, headers, server, fetch in cases:
            before = server.calls[fetch] if server else 0
            counts, cpu_ms, wall = measure(px, mon, path, body, headers, a.calls)
            trips = sum(counts.values()) / a.calls
            rate = a.calls / wall
            fetches = (server.calls[fetch] - before) / (a.calls + 1) if server else 0
            if base is None:
                base = (trips, cpu_ms, rate)
            print("%-16s %.2f round trips (%.2fx the bank's), %.3f ms CPU (%.2fx), %.0f calls/s "
                  "(%.2fx), %.2f calls to the provider a notification"
                  % (name, trips, trips / base[0], cpu_ms, cpu_ms / base[1] if base[1] else 0,
                     rate, rate / base[2], fetches))
    finally:
        px.stop()
        for s in servers:
            s.close()
        redis.stop()
        wd.cleanup()


if __name__ == "__main__":
    main()
