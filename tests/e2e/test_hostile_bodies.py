"""Hostile request bodies: for each parser of a request body, bodies of the
largest size the service accepts, built to be that parser's worst case, sent
to the real binary. Each must get its exact 400 (or 413) answer naming the
field at fault, while /healthz, polled all along from another thread on
other connections, keeps answering: no body may hold the event loop (issue 9,
item 2: 90,000 keys in 1 MiB used to block every tenant for 11 s).

Speed is not judged here beyond a generous liveness bound (every /healthz
within 1 s); the figures are in tests/bench/parsers.c and docs/performance.md.
"""
import base64
import json
import sys
import threading
import time
import unittest

from harness import auth, init_platforms, start_stack, stop_stack

MIB = 1 << 20
MAX_BODY = MIB            # max-body default
MAX_UPLOAD = 16 * MIB     # max-upload default
# ten valid CPFs of 11 digits: an account names each representative once
CPFS = ["52998224725", "12345678909", "98765432100", "11122233396", "44455566619",
        "77788899941", "13579246828", "24681357928", "31415926590", "27182818205"]
HEALTHZ_BOUND_S = 1.0
CHARGE_FIELDS = ("allowed: amount, externalID, expiration, comment, name, email, phone, "
                 "document, postbackUrl, dueDate, daysAfterDue, fine, interest, discount")
TIME_RULE = "must be Unix seconds, 'YYYY-MM-DD HH:MM:SS' (UTC) or RFC 3339"


def fill(head, piece, tail, limit=MAX_BODY):
    """head + piece repeated + tail, as long as it stays within limit bytes."""
    n = (limit - len(head) - len(tail)) // len(piece)
    return head + piece * n + tail


def many_keys(head, tail, limit=MAX_BODY, start=0):
    """An object's members "k<i>":1 from start, filling the body."""
    parts, size, i = [], len(head) + len(tail), start
    while True:
        p = ('"k%d":1' % i).encode()
        if size + len(p) + 1 > limit:
            break
        parts.append(p)
        size += len(p) + 1
        i += 1
    return head + b",".join(parts) + tail, i - start


class Poller(threading.Thread):
    """GET /healthz every 20 ms until stopped; keeps the worst latency."""

    def __init__(self, px):
        super().__init__(daemon=True)
        self.px = px
        self.stop_flag = threading.Event()
        self.worst = 0.0
        self.count = 0
        self.failures = []

    def run(self):
        while not self.stop_flag.is_set():
            t0 = time.monotonic()
            try:
                r = self.px.request("GET", "/healthz", timeout=30)
                if r.status != 200:
                    self.failures.append("status %d" % r.status)
            except Exception as e:  # noqa: BLE001 - any failure is reported
                self.failures.append(repr(e))
            dt = time.monotonic() - t0
            self.worst = max(self.worst, dt)
            self.count += 1
            time.sleep(0.02)


class HostileBodies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        start_stack(cls)
        init = init_platforms(cls.px)
        cls.platform = init["sandbox"]
        cls.key = cls.px.create_key("sandbox")["key"]  # a free sandbox key
        cls.master = cls.px.create_key("sandbox", master=True)["key"]
        s = json.loads(cls.px.cli("secrets", "--env", "sandbox", "--json").stdout)
        cls.ingest_secret = s["ingestSecret"]
        cls.poller = Poller(cls.px)
        cls.poller.start()

    @classmethod
    def tearDownClass(cls):
        cls.poller.stop_flag.set()
        cls.poller.join(60)
        p = cls.poller
        print("\n/healthz during hostile bodies: %d answers, worst %.1f ms" %
              (p.count, p.worst * 1e3), file=sys.stderr)
        stop_stack(cls)
        # checked last, over every test of the class
        assert not p.failures, "healthz failed: %s" % p.failures[:5]
        assert p.count > 0, "healthz was never polled"
        assert p.worst < HEALTHZ_BOUND_S, "a /healthz took %.2f s" % p.worst

    def post(self, path, raw, headers=None, key=None):
        h = {"Content-Type": "application/json"}
        if headers is None:
            h.update(auth(key or self.key))
        else:
            h.update(headers)
        return self.px.request("POST", path, raw=raw, headers=h, timeout=120)

    def assertRefused(self, r, message, status=400):
        self.assertEqual(r.status, status, r)
        self.assertEqual(r.json, {"error": message, "status": status, "data": []})

    def assertBounded(self, raw, limit=MAX_BODY):
        self.assertLessEqual(len(raw), limit)
        self.assertGreater(len(raw), limit - 200)

    def tearDown(self):
        # the service is still whole after every case
        self.assertEqual(self.px.request("GET", "/healthz").status, 200)

    # ---- charge create (the JSON parser itself) ----

    def test_charge_many_keys(self):
        raw, n = many_keys(b"{", b"}")
        self.assertBounded(raw)
        self.assertGreater(n, 80000)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "invalid JSON: more than 10000 values in the body (at k9999)")

    def test_charge_keys_just_under_the_limit(self):
        # 9,998 distinct keys of ~104 bytes that share a long prefix: the
        # most work for the duplicate check that the value limit allows
        keys = [("%092d%04d" % (0, i)) for i in range(9998)]
        raw = ("{" + ",".join('"%s":0' % k for k in keys) + "}").encode()
        self.assertLess(len(raw), MAX_BODY)
        self.assertGreater(len(raw), MAX_BODY - 10 * 9998)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "unknown field '%s'; %s" % (keys[0][:64], CHARGE_FIELDS))

    def test_charge_many_duplicate_keys(self):
        member = '"amount":"%s"' % ("x" * 90)
        raw = ("{" + ",".join([member] * 9998) + "}").encode()
        self.assertGreater(len(raw), 9998 * 100)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "invalid JSON: duplicate field 'amount'")
        # a repeat at the very end of 9,000 distinct keys
        keys = ['"%s%05d":0' % ("y" * 100, i) for i in range(9000)] + ['"%s%05d":1' % ("y" * 100, 17)]
        raw = ("{" + ",".join(keys) + "}").encode()
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "invalid JSON: duplicate field '%s'" % ("y" * 64))

    def test_charge_deep_nesting(self):
        raw = fill(b'{"amount":', b"[", b"")
        self.assertBounded(raw)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "invalid JSON: nested deeper than 32 levels")
        # the deepest allowed, repeated: arrays 31 levels deep, under the value limit
        one = b"[" * 30 + b"]" * 30
        raw = b'{"amount":[' + b",".join([one] * 300) + b"]}"
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "amount: must be a number (an integer number of cents)")

    def test_charge_long_string_of_escapes(self):
        raw = fill(b'{"amount":500,"comment":"', b"\\ud83d\\ude00", b'"}')
        self.assertBounded(raw)
        n = (len(raw) - len(b'{"amount":500,"comment":"') - 2) // 12
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "comment: must be at most 35 characters (got %d)" % n)
        raw = fill(b'{"amount":500,"name":"', "\\\"é\\u00e9\\n".encode(), b'"}')
        self.assertBounded(raw)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "name: must not contain control characters")

    def test_charge_huge_array(self):
        raw = fill(b'{"amount":[', b"0,", b"0]}")
        self.assertBounded(raw)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "invalid JSON: more than 10000 values in the body (at amount[9998])")

    def test_charge_huge_number_and_url(self):
        raw = fill(b'{"amount":', b"9", b"}")
        self.assertBounded(raw)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "amount: must be an integer number of cents")
        raw = fill(b'{"amount":500,"postbackUrl":"https://a.example.com/', b"%41", b'"}')
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "postbackUrl: must be at most 2048 characters (got %d)"
                           % (len(raw) - len(b'{"amount":500,"postbackUrl":"') - 2))

    def test_long_keys_quoted_back(self):
        # a key quoted back is cut at 64 bytes on a character boundary: a
        # cut character made the whole message "\ufffd"
        key = "é" * 80
        raw = json.dumps({"amount": 500, key: 1}).encode()
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "unknown field '%s'; %s" % ("é" * 32, CHARGE_FIELDS))
        raw = ('{"%s":1,"%s":2}' % ("x" + "€" * 30, "x" + "€" * 30)).encode()
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "invalid JSON: duplicate field '%s'" % ("x" + "€" * 21))
        raw = ('{"%s\\u0007":1}' % ("é" * 10)).encode()
        self.assertRefused(self.post("/v1/charge/chg_x/refund", raw),
                           "unknown field '%s?'; allowed: amount, reason" % ("é" * 10))

    def test_body_over_the_cap(self):
        raw = fill(b'{"amount":500,"comment":"', b"a", b'"}', MAX_BODY + 1)
        self.assertEqual(len(raw), MAX_BODY + 1)
        self.assertRefused(self.post("/v1/charge/pix/create", raw),
                           "request body too large: %d bytes, the limit is %d"
                           % (MAX_BODY + 1, MAX_BODY), 413)

    # ---- refund, transfer, event filters ----

    def test_refund(self):
        path = "/v1/charge/chg_nothere/refund"
        raw = fill(b'{"amount":1500,"reason":"', "é".encode(), b'"}')
        self.assertBounded(raw)
        self.assertRefused(self.post(path, raw),
                           "reason: must be a string of at most 500 characters")
        raw, _ = many_keys(b'{"amount":1,', b"}")
        self.assertRefused(self.post(path, raw),
                           "invalid JSON: more than 10000 values in the body (at k9998)")

    def test_transfer(self):
        path = "/v1/baas/internal-transfer"
        h = auth(self.master, self.platform)
        raw = fill(b'{"amount":150,"to_key":"k","from_key":"', b"k", b'"}')
        self.assertBounded(raw)
        self.assertRefused(self.post(path, raw, headers=h),
                           "from_key: must be a Pix key of 1 to 77 characters")
        member = '"to_key":"%s"' % ("k" * 90)
        raw = ('{"amount":150,' + ",".join([member] * 9990) + "}").encode()
        self.assertRefused(self.post(path, raw, headers=h),
                           "invalid JSON: duplicate field 'to_key'")

    def test_event_filters(self):
        raw = fill(b'{"limit":1,"since":"2026-11-22T00:15:51.', b"1", b'Z"}')
        self.assertBounded(raw)
        r = self.post("/v1/events/replay", raw)
        self.assertEqual(r.status, 200, r)  # milliseconds beyond 3 digits are dropped
        self.assertEqual(r.json["data"], {"matched": 0, "requeued": 0})
        raw = fill(b'{"limit":1,"until":"2026-11-22T00:15:51.', b"1", b'-3:00"}')
        self.assertRefused(self.post("/v1/events/replay", raw), "until: " + TIME_RULE)
        r = self.px.request("GET", "/v1/events?since=2026-11-22T00:15:51.123600-3:00",
                            headers=auth(self.key))
        self.assertRefused(r, "since: " + TIME_RULE)
        raw, _ = many_keys(b'{"state":"dead",', b"}")
        self.assertRefused(self.post("/v1/events/replay", raw),
                           "invalid JSON: more than 10000 values in the body (at k9998)")

    # ---- ingest: signature over the whole body, then the notification ----

    def test_ingest(self):
        path = "/v1/webhooks/ingest/" + self.platform
        h = {"signature": self.ingest_secret}
        head = b'{"id":"up-1","event":"EVENT:CHARGE_PAID","data":{"id":"c1",'
        raw, _ = many_keys(head, b"}}")
        self.assertBounded(raw)
        self.assertRefused(self.post(path, raw, headers=h),
                           "invalid JSON: more than 10000 values in the body (at data.k9995)")
        # a repeated key at the end of a large, deep data object
        inner = ",".join('"%s%04d":"\\u00e9"' % ("z" * 90, i) for i in range(9000))
        raw = (head.decode() + '"x":{"y":[{' + inner + ',"%s0007":1}]}}}' % ("z" * 90)).encode()
        self.assertLess(len(raw), MAX_BODY)
        self.assertRefused(self.post(path, raw, headers=h),
                           "invalid JSON: duplicate field '%s'" % ("z" * 64))
        raw = fill(b'{"id":"', b"i", b'","event":"EVENT:CHARGE_PAID","data":{"id":"c1"}}')
        self.assertBounded(raw)
        self.assertRefused(self.post(path, raw, headers=h),
                           "id: must be the notification's id, 1 to 128 printable characters")
        # an unsigned 1 MiB body is refused before it is parsed
        self.assertRefused(self.post(path, raw, headers={}),
                           "missing signature: send Standard Webhooks headers (webhook-id, "
                           "webhook-timestamp, webhook-signature) or the header signature", 401)

    # ---- account creation: 16 MiB of files ----

    def account(self, documents, reps, extra=None):
        b = {"officialName": "Empresa Ltda", "tradeName": "Loja", "taxID": "11222333000181",
             "documents": documents,
             "address": {"zipcode": "01310-100", "street": "Av. Paulista", "number": "1000",
                         "neighborhood": "Bela Vista", "city": "São Paulo", "state": "SP"},
             "representatives": reps}
        b.update(extra or {})
        return json.dumps(b, separators=(",", ":")).encode()

    @staticmethod
    def rep(pic, cpf="52998224725"):
        return {"name": "Fulano", "birthDate": "1990-05-17", "email": "f@example.com",
                "taxID": cpf, "phone": "+55 11 94321-4321",
                "documents": {"picture_face": pic, "picture_identity_front": pic,
                              "picture_identity_back": pic, "picture_identity_type": "RG"}}

    def create_account(self, raw):
        return self.post("/v1/baas/account/create", raw, headers=auth(self.master, self.platform))

    def test_account_most_files(self):
        # 10 documents and 10 representatives with 3 pictures each: 40 files
        # filling the 16 MiB upload; the very last byte of the last picture
        # is not base64, so every file before it is decoded in vain
        size = (MAX_UPLOAD - 8192) // 40 // 4 * 3
        pdf = base64.b64encode(b"%PDF-1.4\n" + bytes(i % 251 for i in range(size - 9))).decode()
        png = base64.b64encode(bytes.fromhex("89504e470d0a1a0a") + bytes(size - 8)).decode()
        reps = [self.rep(png, cpf) for cpf in CPFS]
        reps[9]["documents"]["picture_identity_back"] = png[:-4] + "AAA!"
        raw = self.account([pdf] * 10, reps)
        self.assertLessEqual(len(raw), MAX_UPLOAD)
        self.assertGreater(len(raw), MAX_UPLOAD - 16384)
        self.assertRefused(self.create_account(raw),
                           "representatives[9].documents.picture_identity_back: "
                           "not valid base64")

    def test_account_too_many_items(self):
        pic = base64.b64encode(bytes.fromhex("89504e470d0a1a0a") + bytes(100)).decode()
        pdf = base64.b64encode(b"%PDF-1.4\n").decode()
        raw = self.account([pdf], [self.rep(pic)] * 11)
        self.assertRefused(self.create_account(raw), "representatives: must have at most 10 items")
        raw = self.account([pdf] * 11, [self.rep(pic)])
        self.assertRefused(self.create_account(raw), "documents: must have at most 10 items")
        # 16 MiB of keys and of array items: refused at 10,000 values
        raw, _ = many_keys(b'{"address":{', b"}}", MAX_UPLOAD)
        self.assertBounded(raw, MAX_UPLOAD)
        self.assertRefused(self.create_account(raw),
                           "invalid JSON: more than 10000 values in the body (at address.k9998)")
        raw = fill(b'{"documents":[', b'"",', b'""]}', MAX_UPLOAD)
        self.assertRefused(self.create_account(raw),
                           "invalid JSON: more than 10000 values in the body (at documents[9998])")

    def test_account_large_files(self):
        # one file larger than max-file: refused from its length, not decoded
        big = "A" * (MAX_UPLOAD - 4096)
        raw = self.account([big], [])
        self.assertRefused(self.create_account(raw),
                           "documents[0]: file too large (%d bytes, the limit is %d)"
                           % (len(big) // 4 * 3, 5 * MIB))
        # a 16 MiB name of escapes
        raw = fill(b'{"officialName":"', b"\\u00e9", b'"}', MAX_UPLOAD)
        self.assertRefused(self.create_account(raw),
                           "officialName: must be at most 200 characters (got %d)"
                           % ((len(raw) - 19) // 6))


if __name__ == "__main__":
    unittest.main()
