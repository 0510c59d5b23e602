"""The tests' Asaas (testasaas.py) checked with a plain client: http.client
over ssl, nothing of pixrelay. The access_token and User-Agent refusals in
Asaas's error shape, customers, payments and their values in reais, the
look-up by externalReference, lists paged over 250 payments with whole-date
filters, the pixQrCode payload (read by test_testbank's reader), refunds,
the shapes' refusals, and the notifications: their body, the
asaas-access-token, only 200 delivered, duplicates and drops, the queue
interrupted after 15 consecutive failures and resumed, a Unix socket
receiver, webhooks made with the API. No pixrelay, no Redis."""
import datetime
import http.client
import json
import os
import shutil
import ssl
import tempfile
import time
import unittest

import accountdata
from receiver import Receiver
from test_testbank import decode_br_code
from testasaas import BRASILIA, TestAsaas


TOKEN = "tok-" + "a1b2c3d4" * 5


class Base(unittest.TestCase):
    def setUp(self):
        self.asa = TestAsaas(retry_seconds=0.01).start()
        self.ctx = ssl.create_default_context(cafile=self.asa.server_ca)
        self.tmp = tempfile.mkdtemp(prefix="test-testasaas-")
        self.receivers = []
        self.conn = None

    def tearDown(self):
        self.asa.close()
        if self.conn:
            self.conn.close()
        for r in self.receivers:
            r.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def receiver(self, answers=(200,), unix=None):
        r = Receiver(answers, unix)
        self.receivers.append(r)
        return r

    def raw(self, method, path, body=None, key=True, ua="pixrelay-test/1.0", ctype="application/json"):
        """(status, answer bytes) of a call to asa.url + path over one kept
        connection."""
        if self.conn is None:
            self.conn = http.client.HTTPSConnection("127.0.0.1", self.asa.port, timeout=10, context=self.ctx)
        headers = {"Accept": "application/json"}
        if key is True:
            headers["access_token"] = self.asa.api_key
        elif key is not None:
            headers["access_token"] = key
        if ua is not None:
            headers["User-Agent"] = ua
        if body is not None:
            headers["Content-Type"] = ctype
        self.conn.putrequest(method, "/v3" + path, skip_accept_encoding=True)
        for k, v in headers.items():
            self.conn.putheader(k, v)
        data = body.encode() if isinstance(body, str) else body
        if data is not None:
            self.conn.putheader("Content-Length", str(len(data)))
        self.conn.endheaders(data)
        r = self.conn.getresponse()
        out = r.read()
        if r.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = None
        return r.status, out

    def call(self, method, path, obj=None, **kw):
        status, out = self.raw(method, path, None if obj is None else json.dumps(obj), **kw)
        return status, json.loads(out)

    def customer(self, name="Maria Pagadora", cpf=None, **extra):
        status, out = self.call("POST", "/customers", dict({"name": name, "cpfCnpj": cpf or accountdata.cpf()},
                                                            **extra))
        self.assertEqual(status, 200, out)
        return out

    def payment(self, value="10.50", ref=None, customer=None, due="2026-12-31", **extra):
        """POST /payments with `value` written as is in the JSON text."""
        cus = customer or self.customer()["id"]
        fields = ['"customer":"%s"' % cus, '"billingType":"PIX"', '"value":%s' % value, '"dueDate":"%s"' % due]
        if ref is not None:
            fields.append('"externalReference":"%s"' % ref)
        fields += ['"%s":%s' % (k, json.dumps(v)) for k, v in extra.items()]
        status, out = self.raw("POST", "/payments", "{" + ",".join(fields) + "}")
        self.assertEqual(status, 200, out)
        return json.loads(out), out

    def errors(self, out):
        return [(e["code"], e["description"]) for e in out["errors"]]


class TestAuth(Base):
    def test_the_key_and_the_user_agent_in_asaas_error_shape(self):
        key = self.asa.api_key
        cases = [
            (None, "pixrelay/1.0", "access_token_not_found",
             "O cabeçalho de autenticação 'access_token' é obrigatório e não foi encontrado na requisição"),
            ("", "pixrelay/1.0", "access_token_not_found",
             "O cabeçalho de autenticação 'access_token' é obrigatório e não foi encontrado na requisição"),
            ("Bearer " + key, "pixrelay/1.0", "invalid_access_token_format",
             "O valor fornecido não parece ser uma chave de API válida do Asaas. Verifique o formato da sua chave"),
            ("$aact_prod_" + key[len("$aact_hmlg_"):], "pixrelay/1.0", "invalid_environment",
             "A chave de API informada não pertence a este ambiente"),
            (key[:-2] + ("AA" if not key.endswith("AA") else "BB"), "pixrelay/1.0", "invalid_access_token",
             "A chave de API fornecida é inválida"),
            (key, None, "user_agent_not_found",
             "O cabeçalho 'User-Agent' é obrigatório e não foi encontrado na requisição"),
            (key, "", "user_agent_not_found",
             "O cabeçalho 'User-Agent' é obrigatório e não foi encontrado na requisição"),
        ]
        for k, ua, code, description in cases:
            status, out = self.call("GET", "/payments", key=k, ua=ua)
            self.assertEqual((status, out), (401, {"errors": [{"code": code, "description": description}]}),
                             (k, ua))
        self.assertTrue(key.startswith("$aact_hmlg_"))
        self.assertEqual(self.call("GET", "/payments")[0], 200)
        self.asa.user_agent_required = False   # a root account made before 2024-06-13
        self.assertEqual(self.call("GET", "/payments", ua=None)[0], 200)
        self.assertEqual(self.asa.calls["GET /v3/payments"], len(cases) + 2)
        self.assertEqual(self.asa.violations, [])

    def test_unknown_paths_and_methods(self):
        self.assertEqual(self.call("GET", "/nothing")[0], 404)
        status, out = self.call("PATCH", "/payments")
        self.assertEqual(status, 405)
        status, out = self.call("GET", "/payments/pay_nope")
        self.assertEqual((status, out["errors"][0]["code"]), (404, "not_found"))
        self.assertEqual(self.asa.violations, [])


class TestCustomersAndPayments(Base):
    def test_a_customer_and_its_look_ups(self):
        cpf = accountdata.cpf()
        c = self.customer("Joana", cpf="%s.%s.%s-%s" % (cpf[:3], cpf[3:6], cpf[6:9], cpf[9:]),
                          externalReference="payer-1", email="joana@example.com")
        self.assertRegex(c["id"], r"^cus_[0-9]{12}$")
        self.assertEqual((c["object"], c["cpfCnpj"], c["personType"], c["deleted"]), ("customer", cpf, "FISICA", False))
        company = self.customer("Loja", cpf=accountdata.cnpj())
        self.assertEqual(company["personType"], "JURIDICA")
        for query in ("cpfCnpj=" + cpf, "externalReference=payer-1"):
            status, out = self.call("GET", "/customers?" + query)
            self.assertEqual(status, 200)
            self.assertEqual((out["object"], out["totalCount"], [x["id"] for x in out["data"]]), ("list", 1, [c["id"]]))
        self.assertEqual(self.call("GET", "/customers/" + c["id"]), (200, c))
        self.assertEqual(self.asa.violations, [])
        status, out = self.call("POST", "/customers", {"name": "X", "cpfCnpj": "12345678900"})
        self.assertEqual((status, self.errors(out)), (400, [("invalid_cpfCnpj", "$.cpfCnpj: not a valid CPF or CNPJ")]))
        status, out = self.call("POST", "/customers", {"name": "X"})
        self.assertEqual((status, self.errors(out)), (400, [("invalid_cpfCnpj", "$.cpfCnpj: required")]))
        self.assertEqual([v.endpoint for v in self.asa.take_violations()], ["POST /v3/customers"] * 2)

    def test_a_pix_payment_in_reais(self):
        out, raw = self.payment("10.5", ref="charge-1", description="pedido 1")
        self.assertRegex(out["id"], r"^pay_[a-z0-9]{16}$")
        self.assertIn(b'"value":10.5,', raw)   # written as Asaas does: no float, no trailing zero
        self.assertIn(b'"netValue":10.5,', raw)
        self.assertEqual((out["status"], out["billingType"], out["dueDate"], out["externalReference"],
                          out["description"], out["paymentDate"], out["pixTransaction"], out["deleted"]),
                         ("PENDING", "PIX", "2026-12-31", "charge-1", "pedido 1", None, None, False))
        _, raw = self.payment("10", ref="charge-2")
        self.assertIn(b'"value":10,', raw)
        _, raw = self.payment("0.01")
        self.assertIn(b'"value":0.01,', raw)
        status, got = self.call("GET", "/payments/" + out["id"])
        self.assertEqual((status, got), (200, out))
        status, page = self.call("GET", "/payments?externalReference=charge-1")
        self.assertEqual([p["id"] for p in page["data"]], [out["id"]])
        self.assertEqual(self.asa.payment("charge-1")["id"], out["id"])
        self.assertEqual(self.asa.violations, [])

    def test_the_shapes_refused(self):
        cus = self.customer()["id"]
        base = '"customer":"%s","billingType":"PIX","dueDate":"2026-12-31"' % cus
        cases = [
            ('{%s,"value":0.30000000000000004}' % base, "invalid_value",
             "$.value: reais with at most 2 decimal places"),
            ('{%s,"value":"10.50"}' % base, "invalid_value", "$.value: a number is expected (in reais, e.g. 10.5)"),
            ('{%s,"value":0}' % base, "invalid_value", "$.value: above zero"),
            ('{"customer":"%s","billingType":"PIX","value":1,"dueDate":"2026-12-31T10:00:00"}' % cus,
             "invalid_dueDate", "$.dueDate: a date yyyy-MM-dd is expected"),
            ('{%s,"value":1,"external_reference":"x"}' % base, "invalid_external_reference",
             "$.external_reference: not a field of this request"),
            ('{"billingType":"PIX","value":1,"dueDate":"2026-12-31"}', "invalid_customer", "$.customer: required"),
            ('{"customer":"cus_000000000000","billingType":"PIX","value":1,"dueDate":"2026-12-31"}',
             "invalid_customer", "customer: no customer cus_000000000000 in this account"),
            ('{"customer":"%s","billingType":"BOLETO","value":1,"dueDate":"2026-12-31"}' % cus,
             "invalid_billingType", "billingType: this server plays Pix charges only (absent is UNDEFINED)"),
            ('{"customer":"%s","value":1,"dueDate":"2026-12-31"}' % cus,
             "invalid_billingType", "billingType: this server plays Pix charges only (absent is UNDEFINED)"),
            ('{%s,"value":1,"description":"%s"}' % (base, "x" * 501), "invalid_description",
             "$.description: at most 500 characters"),
            ('{%s,"value":1' % base, "invalid_request", None),
        ]
        for body, code, description in cases:
            status, out = self.raw("POST", "/payments", body)
            [(got_code, got_description)] = self.errors(json.loads(out))
            self.assertEqual((status, got_code), (400, code), body)
            if description:
                self.assertEqual(got_description, description)
        status, out = self.raw("POST", "/payments", '{%s,"value":1}' % base, ctype="text/plain")
        self.assertEqual(status, 400)
        self.assertEqual(len(self.asa.take_violations()), len(cases) + 1)
        self.assertEqual(self.asa.payments, [])

    def test_delete_and_overdue(self):
        p, _ = self.payment(ref="o-1")
        self.asa.overdue(p["id"])
        self.assertEqual(self.call("GET", "/payments/" + p["id"])[1]["status"], "OVERDUE")
        self.assertEqual(self.asa.pay("o-1")["status"], "RECEIVED")   # OVERDUE is still payable
        q, _ = self.payment(ref="d-1")
        self.assertEqual(self.call("DELETE", "/payments/" + q["id"]), (200, {"deleted": True, "id": q["id"]}))
        self.assertEqual(self.call("GET", "/payments/" + q["id"])[1]["deleted"], True)
        self.assertEqual(self.call("GET", "/payments?externalReference=d-1")[1]["totalCount"], 0)
        self.assertEqual(self.call("GET", "/payments/%s/pixQrCode" % q["id"])[0], 404)
        with self.assertRaises(KeyError):
            self.asa.pay("d-1")
        self.assertEqual(self.asa.violations, [])


class TestLists(Base):
    def test_250_payments_paged_with_whole_dates(self):
        cus = self.customer()["id"]
        days = [datetime.datetime(2026, 11, d, 2, 30, tzinfo=datetime.timezone.utc) for d in (10, 11, 12)]
        expected = {}
        for i in range(250):
            p, _ = self.payment("%d.%02d" % divmod(100 + i, 100), ref="r-%d" % i, customer=cus)
            when = days[i % 3] + datetime.timedelta(minutes=i % 25)
            self.asa.pay(p["id"], when=when)
            # 02:30 UTC is 23:30 the day before in Brasilia
            expected.setdefault(when.astimezone(BRASILIA).date().isoformat(), set()).add(p["id"])
        self.assertEqual(sorted(expected), ["2026-11-09", "2026-11-10", "2026-11-11"])
        for lo, hi in (("2026-11-09", "2026-11-09"), ("2026-11-10", "2026-11-11"), ("2026-11-01", "2026-11-30")):
            want = set().union(*(ids for day, ids in expected.items() if lo <= day <= hi))
            seen, offset, pages = [], 0, 0
            while True:
                status, page = self.call("GET", "/payments?billingType=PIX&status=RECEIVED&paymentDate%%5Bge%%5D=%s"
                                         "&paymentDate%%5Ble%%5D=%s&offset=%d&limit=100" % (lo, hi, offset))
                self.assertEqual(status, 200, page)
                self.assertEqual((page["object"], page["totalCount"], page["limit"], page["offset"]),
                                 ("list", len(want), 100, offset))
                seen += [p["id"] for p in page["data"]]
                pages += 1
                self.assertEqual(page["hasMore"], len(seen) < len(want))
                if not page["hasMore"]:
                    break
                offset += 100
            self.assertEqual((len(seen), set(seen)), (len(want), want))
            self.assertEqual(pages, max(1, -(-len(want) // 100)))
        status, page = self.call("GET", "/payments")
        self.assertEqual((page["limit"], len(page["data"]), page["hasMore"], page["totalCount"]), (10, 10, True, 250))
        self.assertEqual(page["data"][0]["externalReference"], "r-249")   # newest first
        self.assertEqual(self.asa.violations, [])
        for query, where in (("limit=101", "?limit"), ("paymentDate%5Bge%5D=2026-11-10T00:00:00", "?paymentDate[ge]"),
                             ("paymentDate%5Bge%5D=2026-02-30", "?paymentDate[ge]"), ("offset=-1", "?offset"),
                             ("status=PAID", "?status"), ("since=2026-11-10", "?since")):
            status, out = self.call("GET", "/payments?" + query)
            self.assertEqual(status, 400, query)
            [v] = self.asa.take_violations()
            self.assertEqual(v.errors[0][0], where)


class TestPixQrCode(Base):
    def test_the_payload_decodes_with_the_amount(self):
        p, _ = self.payment("1234.5")
        status, qr = self.call("GET", "/payments/%s/pixQrCode" % p["id"])
        self.assertEqual(status, 200, qr)
        self.assertEqual(sorted(qr), ["encodedImage", "expirationDate", "payload"])
        fields = decode_br_code(qr["payload"])
        self.assertEqual(fields["54"], "1234.50")
        self.assertEqual(fields["26"]["00"], "br.gov.bcb.pix")
        self.assertTrue(fields["26"]["25"].startswith("pix.asaas.test/qr/cobv/"))
        self.assertEqual(fields["62"]["05"], "***")
        self.assertEqual(qr["expirationDate"], "2027-12-31 23:59:59")   # 12 months after the due date
        self.assertTrue(qr["encodedImage"].startswith("iVBORw0KGgo"))   # a PNG
        self.assertEqual(self.asa.violations, [])


class TestRefunds(Base):
    def test_partial_whole_and_too_much(self):
        p, _ = self.payment("10.00", ref="rf-1")
        status, out = self.call("POST", "/payments/%s/refund" % p["id"], {"value": 1})
        self.assertEqual((status, self.errors(out)),
                         (400, [("invalid_action", "only a received payment can be refunded (status PENDING)")]))
        self.asa.pay("rf-1")
        status, raw = self.raw("POST", "/payments/%s/refund" % p["id"], '{"value":3.5,"description":"troca"}')
        out = json.loads(raw)
        self.assertEqual((status, out["status"]), (200, "RECEIVED"))
        self.assertEqual([(r["status"], r["value"], r["description"]) for r in out["refunds"]],
                         [("DONE", 3.5, "troca")])
        status, out = self.raw("POST", "/payments/%s/refund" % p["id"], '{"value":6.51}')
        self.assertEqual((status, self.errors(json.loads(out))),
                         (400, [("invalid_value", "the value to refund (6.51) is above what remains (6.5)")]))
        status, out = self.call("POST", "/payments/%s/refund" % p["id"])   # no body: what remains
        self.assertEqual((status, out["status"], [r["value"] for r in out["refunds"]]), (200, "REFUNDED", [3.5, 6.5]))
        self.assertEqual([v.kind for v in self.asa.take_violations()], ["rule", "rule"])

    def test_refunds_made_elsewhere_and_in_progress(self):
        p, _ = self.payment("20", ref="rf-2")
        self.asa.pay(p["id"])
        with self.assertRaises(ValueError):
            self.asa.refund(p["id"], value=2001)
        out = self.asa.refund(p["id"], in_progress=True)
        self.assertEqual(out["status"], "REFUND_IN_PROGRESS")
        self.assertEqual(self.asa.finish_refund(p["id"])["status"], "REFUNDED")
        self.assertEqual(self.asa.violations, [])


class TestNotifications(Base):
    def paid_event(self, receiver, ref="n-1", value="10.5"):
        self.asa.webhook_url, self.asa.auth_token = receiver.url(), TOKEN
        p, _ = self.payment(value, ref=ref)
        self.asa.pay(ref, when=datetime.datetime(2026, 11, 20, 15, 0, tzinfo=datetime.timezone.utc))
        self.asa.wait_settled()
        return p

    def test_the_body_and_the_token(self):
        r = self.receiver()
        p = self.paid_event(r)
        self.assertEqual([json.loads(b)["event"] for _, _, b in r.got], ["PAYMENT_CREATED", "PAYMENT_RECEIVED"])
        path, headers, body = r.got[1]
        self.assertEqual((path, headers["asaas-access-token"], headers["Content-Type"]),
                         ("/hook", TOKEN, "application/json"))
        note = json.loads(body)
        self.assertEqual(list(note), ["id", "event", "dateCreated", "payment"])
        self.assertRegex(note["id"], r"^evt_[0-9a-f]{32}&[0-9]+$")
        self.assertRegex(note["dateCreated"], r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$")
        pay = note["payment"]
        self.assertEqual((pay["object"], pay["id"], pay["status"], pay["externalReference"], pay["billingType"]),
                         ("payment", p["id"], "RECEIVED", "n-1", "PIX"))
        self.assertEqual((pay["paymentDate"], pay["clientPaymentDate"], pay["confirmedDate"]), ("2026-11-20",) * 3)
        self.assertRegex(pay["pixTransaction"], r"^[0-9a-f-]{36}$")
        self.assertIn(b'"value":10.5,', body)
        self.assertEqual([(d.status, d.token) for d in self.asa.deliveries], [(200, TOKEN)] * 2)

        self.asa.token = "none"
        self.asa.notify("PAYMENT_RECEIVED", p["id"])
        self.asa.token = "bad"
        self.asa.notify("PAYMENT_RECEIVED", p["id"])
        self.assertNotIn("asaas-access-token", r.got[2][1])
        self.assertNotEqual(r.got[3][1]["asaas-access-token"], TOKEN)
        self.assertEqual(len(r.got[3][1]["asaas-access-token"]), len(TOKEN))
        self.assertEqual(self.asa.violations, [])

    def test_only_200_is_delivered_and_tried_again(self):
        r = self.receiver(answers=(200, 201, 204, 500, 200))
        self.paid_event(r)
        got = [(d.event, d.attempt, d.status) for d in self.asa.deliveries]
        self.assertEqual(got, [("PAYMENT_CREATED", 1, 200), ("PAYMENT_RECEIVED", 1, 201), ("PAYMENT_RECEIVED", 2, 204),
                               ("PAYMENT_RECEIVED", 3, 500), ("PAYMENT_RECEIVED", 4, 200)])
        self.assertEqual(len({d.event_id for d in self.asa.deliveries[1:]}), 1)
        self.assertFalse(self.asa.interrupted())

    def test_duplicates_and_drops(self):
        r = self.receiver()
        self.asa.webhook_faults(twice=1.0, seed=3)
        self.paid_event(r)
        ids = [json.loads(b)["id"] for _, _, b in r.got]
        self.assertEqual(len(ids), 4)
        self.assertEqual((ids[0] == ids[1], ids[2] == ids[3], ids[1] == ids[2]), (True, True, False))
        self.assertEqual(sorted((d.event, d.copy) for d in self.asa.deliveries),
                         [("PAYMENT_CREATED", 1), ("PAYMENT_CREATED", 2), ("PAYMENT_RECEIVED", 1),
                          ("PAYMENT_RECEIVED", 2)])
        self.asa.webhook_faults(drop=1.0)
        self.asa.refund("n-1")
        self.asa.wait_settled()
        self.assertEqual(len(r.got), 4)
        self.assertEqual([(d.event, d.dropped) for d in self.asa.deliveries[-1:]], [("PAYMENT_REFUNDED", True)])

    def test_the_queue_is_interrupted_after_15_failures(self):
        r = self.receiver(answers=(500,))
        self.asa.webhook_url, self.asa.auth_token = r.url(), TOKEN
        self.asa.notify_events = {"PAYMENT_RECEIVED", "PAYMENT_REFUNDED"}
        self.payment(ref="i-1")
        self.asa.pay("i-1")
        self.asa.wait_deliveries(15)
        deadline = time.monotonic() + 10
        while not self.asa.interrupted() and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertTrue(self.asa.interrupted())
        self.asa.refund("i-1")
        time.sleep(0.3)
        self.assertEqual(len(r.got), 15)   # nothing more while interrupted
        self.assertEqual([d.attempt for d in self.asa.deliveries], list(range(1, 16)) + [1])
        self.assertFalse(self.asa.deliveries[-1].done.is_set())   # kept
        status, hooks = self.call("GET", "/webhooks")
        self.assertEqual([(w["name"], w["interrupted"], w["hasAuthToken"]) for w in hooks["data"]],
                         [("Web application", True, True)])
        r.set_answers((200,))
        status, out = self.call("PUT", "/webhooks/" + hooks["data"][0]["id"], {"interrupted": False})
        self.assertEqual((status, out["interrupted"]), (200, False))
        self.asa.wait_settled()
        self.assertEqual([json.loads(b)["event"] for _, _, b in r.got[15:]], ["PAYMENT_RECEIVED", "PAYMENT_REFUNDED"])
        self.assertEqual(self.asa.violations, [])

    def test_resume_after_14_failures_is_not_needed(self):
        r = self.receiver(answers=(500,) * 14 + (200,))
        self.asa.notify_events = {"PAYMENT_RECEIVED"}
        self.paid_event(r)
        self.assertEqual([d.status for d in self.asa.deliveries], [500] * 14 + [200])
        self.assertFalse(self.asa.interrupted())

    def test_a_unix_socket_receiver(self):
        path = os.path.join(self.tmp, "door.sock")
        r = self.receiver(unix=path)
        self.asa.webhook_url, self.asa.auth_token = "unix:%s:/v1/webhooks/bank/x" % path, TOKEN
        self.payment(ref="u-1")
        self.asa.wait_settled()
        self.assertEqual([(p, h["asaas-access-token"]) for p, h, _ in r.got], [("/v1/webhooks/bank/x", TOKEN)])

    def test_webhooks_made_with_the_api(self):
        r = self.receiver()
        hook = {"name": "pixrelay", "url": r.url("/api-hook"), "email": "ops@example.com", "enabled": True,
                "interrupted": False, "authToken": "short", "sendType": "SEQUENTIALLY",
                "events": ["PAYMENT_RECEIVED"]}
        status, out = self.call("POST", "/webhooks", hook)
        self.assertEqual((status, self.errors(out)),
                         (400, [("invalid_authToken", "$.authToken: 32 to 255 characters")]))
        self.assertEqual(len(self.asa.take_violations()), 1)
        hook["authToken"] = TOKEN
        status, out = self.call("POST", "/webhooks", hook)
        self.assertEqual(status, 200, out)
        self.assertEqual((out["url"], out["events"], out["sendType"], out["hasAuthToken"]),
                         (hook["url"], ["PAYMENT_RECEIVED"], "SEQUENTIALLY", True))
        self.assertNotIn("authToken", out)
        self.assertEqual(self.call("GET", "/webhooks/" + out["id"]), (200, out))
        self.payment(ref="w-1")
        self.asa.pay("w-1")
        self.asa.wait_settled()
        self.assertEqual([(p, h["asaas-access-token"], json.loads(b)["event"]) for p, h, b in r.got],
                         [("/api-hook", TOKEN, "PAYMENT_RECEIVED")])
        self.assertEqual(self.call("DELETE", "/webhooks/" + out["id"]), (200, {"deleted": True, "id": out["id"]}))
        self.assertEqual(self.asa.violations, [])


class TestFailureKnobs(Base):
    def test_down_slow_and_calls(self):
        self.asa.down(mode="503")
        self.assertEqual(self.call("GET", "/payments")[0], 503)
        self.asa.up()
        self.asa.slow(0.3)
        t = time.monotonic()
        self.assertEqual(self.call("GET", "/payments")[0], 200)
        self.assertGreaterEqual(time.monotonic() - t, 0.3)
        self.asa.slow(0)
        self.asa.down(mode="refuse")
        if self.conn:
            self.conn.close()
            self.conn = None
        with self.assertRaises(OSError):
            self.call("GET", "/payments")
        self.conn = None
        self.asa.up()
        self.assertEqual(self.call("GET", "/payments")[0], 200)
        self.assertEqual(self.asa.calls["GET /v3/payments"], 3)


if __name__ == "__main__":
    unittest.main()
