"""Pix charges end to end: POST /v1/charge/pix/create, GET /v1/charge/pix/{id}
and GET /v1/qrcode/{id}, against the real binary and a real Redis.

What is asserted is what a caller sees: status codes, exact error messages,
exact field values, the BR Code checked field by field with a CRC computed
here, and the QR image decoded with zbarimg.
"""
import calendar
import json
import os
import random
import re
import shutil
import struct
import subprocess
import threading
import time
import unittest

from harness import (ModuleStack, Pixrelay, Processes, acct_key, auth, connect_bank, free_port,
                     init_platforms, new_ulid, start_stack, store_account)

CREATE = "/v1/charge/pix/create"
ENVELOPE_KEYS = {"error", "status", "data"}
CHARGE_KEYS = {"id", "externalID", "brCode", "brCodeImageUrl", "amount", "comment", "expiration",
               "fee", "expiresAt", "status", "customer", "createdAt", "updatedAt"}
CUSTOMER_KEYS = {"id", "name", "document", "email", "phone"}
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
CUS_RE = re.compile(r"^cus_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
ULID_RE = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
ALLOWED = ("allowed: amount, externalID, expiration, comment, name, email, phone, document, "
           "postbackUrl, dueDate, daysAfterDue, fine, interest, discount")
SIZE_MSG = "size: must be an integer from 1 to 20 (pixels per module)"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ZBARIMG = shutil.which("zbarimg")


# ---- helpers computed independently of the product ----

def crc16_ccitt_false(text):
    crc = 0xFFFF
    for b in text.encode("ascii"):
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def tlv(s):
    """Strict EMV TLV reader: [(id, value)] in order; raises on any overrun."""
    out, i = [], 0
    while i < len(s):
        if i + 4 > len(s):
            raise ValueError("truncated TLV header at %d in %r" % (i, s))
        tag, n = s[i:i + 2], s[i + 2:i + 4]
        if not (tag.isdigit() and n.isdigit()):
            raise ValueError("bad TLV header %r at %d" % (s[i:i + 4], i))
        n = int(n)
        if i + 4 + n > len(s):
            raise ValueError("TLV %s runs past the end" % tag)
        out.append((tag, s[i + 4:i + 4 + n]))
        i += 4 + n
    return out


def fee_rule(amount, fixed=0, bps=80):
    return min(amount, fixed + (amount * bps + 5000) // 10000)


def parse_ts(s):
    return calendar.timegm(time.strptime(s, "%Y-%m-%d %H:%M:%S"))


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:16]
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


JSON_CT = {"Content-Type": "application/json"}


class Env(ModuleStack):
    """One Redis and one pixrelay for the whole module (started on first use)."""
    shared = ("wd", "redis", "px", "sandbox_platform", "production_platform", "key", "live",
              "master", "other", "other_pix_key", "other_key", "extra", "live_pix_key")

    @classmethod
    def setup(cls):
        # a fixed port, so that the default base URL (http://<listen>/v1) is usable
        start_stack(cls, args=["--max-body", "4096"], port=free_port())
        init = init_platforms(cls.px)
        cls.sandbox_platform = init["sandbox"]
        cls.production_platform = init["production"]
        cls.key = cls.px.create_key("sandbox")["key"]
        cls.live = cls.px.create_key("production")["key"]
        # production charges need a bank to receive them: its key is on their code
        cls.live_pix_key = connect_bank(cls.px)["pixKey"]
        cls.master = cls.px.create_key("sandbox", master=True)["key"]
        # a second sandbox account, stored directly (only what charges read:
        # its own Pix key), and an account key for it
        cls.other = new_ulid()
        cls.other_pix_key = "b1f7c2a4-3d5e-4f60-8a9b-0c1d2e3f4a5b"
        cls.redis.cmd("HSET", acct_key("sandbox", cls.other), "id", cls.other,
                      "env", "sandbox", "kind", "business", "officialName", "Other Ltda",
                      "tradeName", "Other", "status", "ACTIVE", "created_at", "0", "owner", "",
                      "pix_key", cls.other_pix_key)
        cls.other_key = cls.px.create_key("sandbox", account=cls.other)["key"]
        cls.extra = []

    @classmethod
    def teardown(cls):
        for p in cls.extra:
            p.stop()


def tearDownModule():
    Env.stop()


class ChargesBase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        Env.share(cls)

    # ---- request helpers ----

    def create(self, body, key=None, px=None, headers=None):
        h = dict(auth(key or self.key))
        h.update(headers or {})
        return (px or self.px).request("POST", CREATE, body=body, headers=h)

    def create_raw(self, raw, key=None, ctype="application/json"):
        h = dict(auth(key or self.key))
        if ctype is not None:
            h["Content-Type"] = ctype
        return self.px.request("POST", CREATE, raw=raw, headers=h)

    def ok(self, body, key=None, px=None, headers=None):
        r = self.create(body, key, px, headers)
        self.assertEqual(r.status, 200, r)
        j = r.json
        self.assertEqual(set(j), ENVELOPE_KEYS)
        self.assertIsNone(j["error"])
        self.assertEqual(j["status"], 200)
        self.assertEqual(set(j["data"]), CHARGE_KEYS, j["data"])
        return j["data"]

    def assertBad(self, r, message, status=400):
        self.assertEqual(r.status, status, r)
        self.assertTrue(r.header("Content-Type").startswith("application/json"), r.headers)
        self.assertEqual(r.json, {"error": message, "status": status, "data": []})

    def refused(self, body, message, key=None):
        self.assertBad(self.create(body, key), message)

    def get(self, cid, key=None, px=None):
        return (px or self.px).request("GET", "/v1/charge/pix/" + cid,
                                       headers=auth(key or self.key))

    def qr(self, path, px=None):
        return (px or self.px).request("GET", path)

    def pix_key_of(self, env, account):
        return self.redis.cmd("HGET", acct_key(env, account), "pix_key")

    def start_extra(self, args, name):
        p = Pixrelay(self.wd.path, self.redis, args=args, name=name).start()
        self.extra.append(p)
        p.wait_ready()
        return p

    def brcode_fields(self, code):
        """Check the frame (CRC, order, lengths) and return the top-level and
        field 26 / 62 sub-fields as dicts."""
        self.assertTrue(code.isascii(), code)
        self.assertRegex(code[-8:], r"^6304[0-9A-F]{4}$")
        self.assertEqual("%04X" % crc16_ccitt_false(code[:-4]), code[-4:], code)
        fields = tlv(code)
        tags = [t for t, _ in fields]
        self.assertEqual(len(tags), len(set(tags)), code)
        self.assertEqual(tags[0], "00")
        self.assertEqual(tags[-1], "63")
        self.assertEqual(tags, sorted(tags), code)
        top = dict(fields)
        acc = tlv(top["26"])
        self.assertLessEqual(len(top["26"]), 99)
        extra = dict(tlv(top["62"]))
        return top, dict(acc), [t for t, _ in acc], extra


class CreateValidation(ChargesBase):
    """Every rule of the create body, with its exact 400 envelope."""

    def test_amount_rules(self):
        self.refused({}, "amount: is required (an integer number of cents)")
        self.refused({"amount": None}, "amount: is required (an integer number of cents)")
        self.refused({"amount": "200"}, "amount: must be a number (an integer number of cents)")
        self.refused({"amount": True}, "amount: must be a number (an integer number of cents)")
        self.refused({"amount": [200]}, "amount: must be a number (an integer number of cents)")
        self.refused({"amount": {"cents": 200}},
                     "amount: must be a number (an integer number of cents)")
        self.refused({"amount": 199}, "amount: must be at least 200 (cents)")
        self.refused({"amount": 0}, "amount: must be at least 200 (cents)")
        self.refused({"amount": -500}, "amount: must be at least 200 (cents)")
        self.refused({"amount": 250.5}, "amount: must be an integer number of cents")
        self.assertBad(self.create_raw(b'{"amount": 1e3}'),
                       "amount: must be an integer number of cents")
        self.refused({"amount": 100000000000}, "amount: must be at most 99999999999 (cents)")
        self.assertEqual(self.ok({"amount": 200})["amount"], 200)
        top = self.brcode_fields(self.ok({"amount": 99999999999})["brCode"])[0]
        self.assertEqual(top["54"], "999999999.99")

    def test_expiration_rules(self):
        self.refused({"amount": 500, "expiration": 299}, "expiration: must be at least 300 (seconds)")
        self.refused({"amount": 500, "expiration": -1}, "expiration: must be at least 300 (seconds)")
        self.refused({"amount": 500, "expiration": 300.5},
                     "expiration: must be an integer number of seconds")
        self.refused({"amount": 500, "expiration": 2592001},
                     "expiration: must be at most 2592000 (seconds)")
        self.refused({"amount": 500, "expiration": "3600"}, "expiration: must be a number (seconds)")
        self.refused({"amount": 500, "expiration": False}, "expiration: must be a number (seconds)")
        self.assertEqual(self.ok({"amount": 500, "expiration": 300})["expiration"], 300)
        self.assertEqual(self.ok({"amount": 500, "expiration": 2592000})["expiration"], 2592000)

    def test_comment_counts_characters(self):
        d = self.ok({"amount": 500, "comment": "ç" * 35})
        self.assertEqual(d["comment"], "ç" * 35)
        self.ok({"amount": 500, "comment": "x" * 35})
        self.ok({"amount": 500, "comment": "\U0001F600" * 35})  # 4 bytes each, 35 characters
        self.refused({"amount": 500, "comment": "ç" * 36},
                     "comment: must be at most 35 characters (got 36)")
        self.refused({"amount": 500, "comment": "x" * 36},
                     "comment: must be at most 35 characters (got 36)")
        self.refused({"amount": 500, "comment": "a\nb"},
                     "comment: must not contain control characters")
        self.refused({"amount": 500, "comment": "tab\there"},
                     "comment: must not contain control characters")

    def test_string_lengths(self):
        self.ok({"amount": 500, "externalID": "e" * 100})
        self.refused({"amount": 500, "externalID": "e" * 101},
                     "externalID: must be at most 100 characters (got 101)")
        self.refused({"amount": 500, "externalID": ""}, "externalID: must not be empty")
        self.refused({"amount": 500, "externalID": "   "}, "externalID: must not be empty")
        self.ok({"amount": 500, "name": "n" * 120})
        self.refused({"amount": 500, "name": "n" * 121},
                     "name: must be at most 120 characters (got 121)")

    def test_email_phone_document_postback(self):
        for bad in ["fulano", "fulano@", "@example.com", "fulano@example", "a b@example.com",
                    "fulano@@example.com", "fulano@example..com", ".fulano@example.com"]:
            self.refused({"amount": 500, "email": bad}, "email: not a valid e-mail address")
        for bad in ["abc", "1234567", "+", "1234567890123456", "11 9999-99x9", "(11 99999-9999"]:
            self.refused({"amount": 500, "phone": bad},
                         "phone: not a valid phone number (8 to 15 digits, optional +)")
        for bad in ["52998224724", "11222333000182", "11111111111", "00000000000000",
                    "529.982.24725", "5299822472", "abc", ""]:
            self.refused({"amount": 500, "document": bad}, "document: not a valid CPF or CNPJ")
        for bad in ["/webhook", "webhook.example.com/pix", "ftp://example.com/pix",
                    "javascript:alert(1)", "https://user:pw@example.com/pix",
                    "https://exa mple.com/", "http://"]:
            self.refused({"amount": 500, "postbackUrl": bad},
                         "postbackUrl: must be an absolute http or https URL")
        d = self.ok({"amount": 500, "email": "fulano.tal+pix@example.com.br",
                     "phone": "+55 (11) 91234-5678",
                     "postbackUrl": "https://shop.example.com/pix/webhook?order=12"})
        self.assertEqual(d["customer"]["email"], "fulano.tal+pix@example.com.br")
        self.assertEqual(d["customer"]["phone"], "+55 (11) 91234-5678")
        self.assertNotIn("postbackUrl", d)

    def test_documents_are_normalised(self):
        cases = [("529.982.247-25", "52998224725"), ("52998224725", "52998224725"),
                 ("11.222.333/0001-81", "11222333000181"), ("11222333000181", "11222333000181"),
                 ("12ABC34501DE35", "12ABC34501DE35"), ("12abc34501de35", "12ABC34501DE35"),
                 ("12.ABC.345/01DE-35", "12ABC34501DE35")]
        for given, stored in cases:
            d = self.ok({"amount": 500, "document": given})
            self.assertEqual(d["customer"]["document"], stored, given)
            r = self.get(d["id"])
            self.assertEqual(r.json["data"]["customer"]["document"], stored)

    def test_unknown_field_is_named(self):
        self.refused({"amount": 500, "value": 500}, "unknown field 'value'; " + ALLOWED)
        self.refused({"amount": 500, "customer": {"name": "x"}},
                     "unknown field 'customer'; " + ALLOWED)
        self.refused({"amount": 500, "ExternalID": "x"}, "unknown field 'ExternalID'; " + ALLOWED)
        # an unknown field is reported even when other fields are wrong too
        self.refused({"foo": 1}, "unknown field 'foo'; " + ALLOWED)

    def test_wrong_types_for_strings(self):
        for field in ["externalID", "comment", "name", "email", "phone", "document",
                      "postbackUrl"]:
            for v in [{"x": 1}, ["a"], True, 12]:
                self.refused({"amount": 500, field: v}, "%s: must be a string" % field)

    def test_null_optional_fields_are_absent(self):
        d = self.ok({"amount": 500, "externalID": None, "expiration": None, "comment": None,
                     "name": None, "email": None, "phone": None, "document": None,
                     "postbackUrl": None})
        self.assertIsNone(d["externalID"])
        self.assertIsNone(d["comment"])
        self.assertIsNone(d["customer"])
        self.assertEqual(d["expiration"], 86400)

    def test_malformed_bodies(self):
        r = self.create_raw(b'{"amount": ')
        self.assertBad(r, "invalid JSON: parse error: premature EOF")
        r = self.create_raw(b'{"amount": 200,}')
        self.assertBad(r, "invalid JSON: parse error: invalid object key (must be a string)")
        r = self.create_raw(b"amount=200")
        self.assertEqual(r.status, 400)
        self.assertTrue(r.json["error"].startswith("invalid JSON: "), r)
        self.assertEqual(r.json["data"], [])
        self.assertBad(self.create_raw(b'{"amount": 200, "amount": 300}'),
                       "invalid JSON: duplicate field 'amount'")
        self.assertBad(self.create_raw(b'{"amount": 200, "comment": "a", "comment": "a"}'),
                       "invalid JSON: duplicate field 'comment'")
        for raw in [b"[]", b'[{"amount": 200}]', b'"x"', b"200", b"null", b"true"]:
            self.assertBad(self.create_raw(raw), "request body must be a JSON object")
        self.assertBad(self.create_raw(b""), "request body is empty; a JSON object is expected")
        self.assertBad(self.create_raw(b"", ctype=None),
                       "request body is empty; a JSON object is expected")
        self.assertBad(self.create_raw(b'{"amount":' + b"[" * 100 + b"]" * 100 + b"}"),
                       "invalid JSON: nested deeper than 32 levels")

    def test_content_type_and_size(self):
        for ctype in [None, "text/plain", "application/x-www-form-urlencoded",
                      "application/jsonx"]:
            self.assertBad(self.create_raw(b'{"amount": 500}', ctype=ctype),
                           "Content-Type must be application/json", status=415)
        r = self.create_raw(b'{"amount": 500}', ctype="Application/JSON; charset=utf-8")
        self.assertEqual(r.status, 200, r)
        body = json.dumps({"amount": 500, "name": "n" * 4980}).encode()
        self.assertBad(self.create_raw(body),
                       "request body too large: %d bytes, the limit is 4096" % len(body), 413)
        self.assertEqual(self.px.request("GET", "/healthz").status, 200)

    def test_authentication_required(self):
        r = self.px.request("POST", CREATE, body={"amount": 500})
        self.assertBad(r, "missing API key: send the header Authorization: Bearer <API key>", 401)
        self.assertEqual(r.header("WWW-Authenticate"), "Bearer")
        r = self.px.request("POST", CREATE, body={"amount": 500}, headers=auth("pxr_test_nope"))
        self.assertBad(r, "invalid API key", 401)

    # a "\u0000" escape would cut the string short in C: refused everywhere
    NUL_MSG = "invalid JSON: \\u0000 is not allowed in strings"

    def test_nul_escape_in_a_string_is_refused(self):
        r = self.create_raw(b'{"amount": 500, "comment": "abc\\u0000def"}')
        self.assertBad(r, self.NUL_MSG)

    def test_nul_escape_in_external_id_is_refused(self):
        r = self.create_raw(b'{"amount": 500, "externalID": "nul-a\\u0000b"}')
        self.assertBad(r, self.NUL_MSG)

    def test_nul_escape_in_a_field_name_is_refused(self):
        r = self.create_raw(b'{"amount\\u0000x": 500}')
        self.assertBad(r, self.NUL_MSG)

    def test_lone_surrogate_is_refused(self):
        for raw in (b'{"amount": 500, "comment": "x\\ud800"}',
                    b'{"amount": 500, "comment": "x\\udc00y"}',
                    b'{"amount": 500, "comment": "\\ud800\\u0041"}'):
            self.assertBad(self.create_raw(raw),
                           "invalid JSON: unpaired UTF-16 surrogate in a string")
        d = self.ok({"amount": 500, "comment": "ok \U0001F600"})
        self.assertEqual(d["comment"], "ok \U0001F600")


class CreateResponse(ChargesBase):
    """The 200 body: fields, fee, timestamps, customer, image address."""

    def test_shape_and_values(self):
        before = time.time()
        d = self.ok({"amount": 1234, "externalID": "wc_order_1", "expiration": 3600,
                     "comment": "Pedido 1"})
        after = time.time()
        self.assertRegex(d["id"], ULID_RE)
        self.assertEqual(d["externalID"], "wc_order_1")
        self.assertEqual(d["amount"], 1234)
        self.assertEqual(d["comment"], "Pedido 1")
        self.assertEqual(d["expiration"], 3600)
        self.assertEqual(d["fee"], fee_rule(1234))
        self.assertEqual(d["status"], "PENDING")
        self.assertIsNone(d["customer"])
        for f in ("expiresAt", "createdAt", "updatedAt"):
            self.assertRegex(d[f], TS_RE)
        self.assertEqual(d["createdAt"], d["updatedAt"])
        self.assertEqual(parse_ts(d["expiresAt"]) - parse_ts(d["createdAt"]), 3600)
        # UTC, and now
        self.assertGreaterEqual(parse_ts(d["createdAt"]), int(before) - 1)
        self.assertLessEqual(parse_ts(d["createdAt"]), int(after) + 1)
        self.assertEqual(d["brCodeImageUrl"],
                         "http://127.0.0.1:%d/v1/qrcode/%s" % (self.px.port, d["id"]))
        for k in ("amount", "expiration", "fee"):
            self.assertIs(type(d[k]), int)

    def test_default_expiration(self):
        d = self.ok({"amount": 500})
        self.assertEqual(d["expiration"], 86400)
        self.assertEqual(parse_ts(d["expiresAt"]) - parse_ts(d["createdAt"]), 86400)
        d = self.ok({"amount": 500, "expiration": 300})
        self.assertEqual(parse_ts(d["expiresAt"]) - parse_ts(d["createdAt"]), 300)

    def test_default_fee(self):
        for amount in [200, 201, 1062, 1063, 1250, 10000, 123456, 99999999999]:
            d = self.ok({"amount": amount})
            self.assertEqual(d["fee"], fee_rule(amount), amount)
        self.assertEqual(fee_rule(200), 2)
        self.assertEqual(fee_rule(1062), 8)
        self.assertEqual(fee_rule(1063), 9)

    def test_customer(self):
        d = self.ok({"amount": 500, "name": "Fulano de Tal"})
        c = d["customer"]
        self.assertEqual(set(c), CUSTOMER_KEYS)
        self.assertRegex(c["id"], CUS_RE)
        self.assertEqual(c, {"id": c["id"], "name": "Fulano de Tal", "document": None,
                             "email": None, "phone": None})
        d = self.ok({"amount": 500, "email": "a@example.com"})
        self.assertEqual(d["customer"]["email"], "a@example.com")
        self.assertIsNone(d["customer"]["name"])
        d = self.ok({"amount": 500, "phone": "11912345678"})
        self.assertEqual(d["customer"]["phone"], "11912345678")
        full = self.ok({"amount": 500, "name": "Beltrana", "document": "390.533.447-05",
                        "email": "b@example.com", "phone": "+5511912345678"})["customer"]
        self.assertRegex(full["id"], CUS_RE)
        self.assertEqual(full, {"id": full["id"], "name": "Beltrana", "document": "39053344705",
                                "email": "b@example.com", "phone": "+5511912345678"})

    def test_customer_id_follows_the_document(self):
        a = self.ok({"amount": 500, "document": "11144477735"})["customer"]["id"]
        b = self.ok({"amount": 700, "document": "111.444.777-35", "name": "Outro nome"})
        self.assertEqual(b["customer"]["id"], a)
        c = self.ok({"amount": 500, "document": "29094848074"})["customer"]["id"]
        self.assertNotEqual(c, a)
        for cid in (a, c):
            self.assertRegex(cid, CUS_RE)
        # another account, and the other environment, have their own customers
        o = self.ok({"amount": 500, "document": "11144477735"}, key=self.other_key)
        self.assertNotEqual(o["customer"]["id"], a)
        p = self.ok({"amount": 500, "document": "11144477735"}, key=self.live)
        self.assertNotEqual(p["customer"]["id"], a)
        self.assertNotEqual(p["customer"]["id"], o["customer"]["id"])

    def test_default_base_url_follows_listen(self):
        d = self.ok({"amount": 500})
        url = d["brCodeImageUrl"]
        self.assertTrue(url.startswith("http://127.0.0.1:%d/v1/qrcode/" % self.px.port), url)
        path = url[len("http://127.0.0.1:%d" % self.px.port):]
        r = self.qr(path)
        self.assertEqual(r.status, 200)

    # with --listen 127.0.0.1:0 the derived base URL names the port actually bound
    def test_default_base_url_with_an_ephemeral_port(self):
        p = self.start_extra([], "ephemeral")
        d = self.ok({"amount": 500}, px=p)
        self.assertEqual(d["brCodeImageUrl"], "http://127.0.0.1:%d/v1/qrcode/%s" % (p.port, d["id"]))


class Settings(ChargesBase):
    """Charges under non-default settings."""

    def test_fee_base_url_pix_key_merchant_and_expirations(self):
        p = self.start_extra(["--fee-fixed", "150", "--fee-bps", "125",
                              "--pix-key", "fulano@example.com",
                              "--merchant-name", "Padaria São João Ltda Açúcar e Café",
                              "--merchant-city", "São José dos Campos",
                              "--base-url", "https://pix.example.com/v1/",
                              "--default-expiration", "3600", "--max-expiration", "7200"],
                             "custom")
        d = self.ok({"amount": 200, "comment": "Pão de queijo"}, px=p)
        self.assertEqual(d["fee"], 153)  # 150 + 2.5 rounded half up
        self.assertEqual(d["fee"], fee_rule(200, 150, 125))
        self.assertEqual(d["brCodeImageUrl"], "https://pix.example.com/v1/qrcode/" + d["id"])
        self.assertEqual(d["expiration"], 3600)
        self.assertEqual(parse_ts(d["expiresAt"]) - parse_ts(d["createdAt"]), 3600)
        top, acc, acc_tags, extra = self.brcode_fields(d["brCode"])
        self.assertEqual(acc, {"00": "br.gov.bcb.pix", "01": "fulano@example.com",
                               "02": "Pao de queijo"})
        self.assertEqual(top["59"], "Padaria Sao Joao Ltda Acu")
        self.assertEqual(top["60"], "Sao Jose dos Ca")
        self.assertEqual(top["54"], "2.00")
        for amount in [600, 12345, 99999999999]:
            self.assertEqual(self.ok({"amount": amount}, px=p)["fee"],
                             fee_rule(amount, 150, 125), amount)
        self.assertBad(self.create({"amount": 500, "expiration": 7201}, px=p),
                       "expiration: must be at most 7200 (seconds)")
        self.assertEqual(self.ok({"amount": 500, "expiration": 7200}, px=p)["expiration"], 7200)
        # the QR image is served by that process too
        r = self.qr("/v1/qrcode/" + d["id"], px=p)
        self.assertEqual(r.status, 200)

    def test_fee_never_above_amount(self):
        p = self.start_extra(["--fee-fixed", "300", "--fee-bps", "10000"], "feecap")
        for amount in [200, 299, 300, 1000]:
            self.assertEqual(self.ok({"amount": amount}, px=p)["fee"], amount, amount)
        q = self.start_extra(["--fee-fixed", "100", "--fee-bps", "0"], "feeflat")
        self.assertEqual(self.ok({"amount": 200}, px=q)["fee"], 100)
        self.assertEqual(self.ok({"amount": 99999}, px=q)["fee"], 100)

    def test_long_pix_key_leaves_less_room_for_the_comment(self):
        # field 26 holds at most 99 characters: GUI 18 + key (4 + n) + comment (4 + m)
        key60 = "chave-" + "a" * 54
        p = self.start_extra(["--pix-key", key60], "key60")
        d = self.ok({"amount": 500, "comment": "Comentário bem comprido com 35 chr"}, px=p)
        self.assertEqual(d["comment"], "Comentário bem comprido com 35 chr")
        top, acc, tags, _ = self.brcode_fields(d["brCode"])
        self.assertEqual(acc, {"00": "br.gov.bcb.pix", "01": key60, "02": "Comentario be"})
        self.assertEqual(len(top["26"]), 99)
        key77 = "k" * 77
        q = self.start_extra(["--pix-key", key77], "key77")
        d = self.ok({"amount": 500, "comment": "sem espaco"}, px=q)
        self.assertEqual(d["comment"], "sem espaco")
        top, acc, tags, _ = self.brcode_fields(d["brCode"])
        self.assertEqual(tags, ["00", "01"])
        self.assertEqual(acc["01"], key77)

    # a default expiration above the maximum is refused at start
    def test_default_expiration_never_exceeds_max(self):
        with self.assertRaises(AssertionError) as ctx:
            self.start_extra(["--max-expiration", "3600"], "maxexp")
        self.assertIn("default-expiration (86400) must not exceed max-expiration (3600)",
                      str(ctx.exception))
        p = self.start_extra(["--max-expiration", "3600", "--default-expiration", "600"],
                             "maxexp2")
        self.assertBad(self.create({"amount": 500, "expiration": 86400}, px=p),
                       "expiration: must be at most 3600 (seconds)")
        self.assertEqual(self.ok({"amount": 500}, px=p)["expiration"], 600)


class BrCode(ChargesBase):
    def test_fields(self):
        d = self.ok({"amount": 1234, "comment": "Pedido nº 42 — café"})
        code = d["brCode"]
        top, acc, acc_tags, extra = self.brcode_fields(code)
        self.assertEqual(top["00"], "01")
        self.assertEqual(top["01"], "12")
        self.assertEqual(acc_tags, ["00", "01", "02"])
        self.assertEqual(acc["00"].lower(), "br.gov.bcb.pix")
        self.assertEqual(acc["01"], self.pix_key_of("sandbox", self.sandbox_platform))
        self.assertEqual(acc["02"], "Pedido no 42 cafe")
        self.assertEqual(top["52"], "0000")
        self.assertEqual(top["53"], "986")
        self.assertEqual(top["54"], "12.34")
        self.assertEqual(top["58"], "BR")
        self.assertEqual(top["59"], "PIXRELAY")
        self.assertEqual(top["60"], "SAO PAULO")
        self.assertEqual(extra, {"05": d["id"][1:]})
        self.assertRegex(extra["05"], r"^[0-9A-Za-z]{25}$")
        self.assertEqual(d["id"][0], "0")

    def test_amount_formatting(self):
        for amount, text in [(200, "2.00"), (205, "2.05"), (1000, "10.00"), (123456, "1234.56")]:
            top = self.brcode_fields(self.ok({"amount": amount})["brCode"])[0]
            self.assertEqual(top["54"], text)

    def test_comment_is_field_26_02_folded(self):
        d = self.ok({"amount": 500, "comment": "ç" * 35})
        acc = self.brcode_fields(d["brCode"])[1]
        self.assertEqual(acc["02"], "c" * 35)
        d = self.ok({"amount": 500, "comment": "Ação  Ótima ÀÉÎÕÜ ñ"})
        self.assertEqual(self.brcode_fields(d["brCode"])[1]["02"], "Acao Otima AEIOU n")
        d = self.ok({"amount": 500})
        _, acc, tags, _ = self.brcode_fields(d["brCode"])
        self.assertEqual(tags, ["00", "01"])

    def test_each_account_and_environment_has_its_own_key(self):
        # in the sandbox, an account without a bank connection: its own key
        o = self.ok({"amount": 500}, key=self.other_key)
        self.assertEqual(self.brcode_fields(o["brCode"])[1]["01"], self.other_pix_key)
        # in production, its bank connection's
        p = self.ok({"amount": 500}, key=self.live)
        self.assertEqual(self.brcode_fields(p["brCode"])[1]["01"], self.live_pix_key)
        self.assertNotEqual(self.live_pix_key, self.pix_key_of("production", self.production_platform))

    def test_crc_reference_value(self):
        self.assertEqual(crc16_ccitt_false("123456789"), 0x29B1)
        known = ("00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053"
                 "039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D")
        self.assertEqual("%04X" % crc16_ccitt_false(known[:-4]), known[-4:])


class KeyOnTheQr(ChargesBase):
    """A charge's static BR Code carries the Pix key of the account's charging
    connection in its environment: the only one, or the one marked default
    (docs/banks.md, "The key on the QR")."""

    def decoded_key(self, code):
        """Field 26.01 as `pixrelay brcode decode` reads it."""
        return json.loads(self.px.cli("brcode", "decode", code).stdout)["merchantAccount"]["key"]

    def connect(self, account, chave, *more):
        p = self.px.cli("bank", "connect", "--env", "sandbox", "--account", account, "--chave", chave,
                        "--url-token", *more, "--json")
        return json.loads(p.stdout), p.stderr

    def test_several_connections_and_the_default(self):
        account, key = store_account(self.redis, self.px, "Duas Contas")
        own = self.pix_key_of("sandbox", account)
        # none: its own key, as before (the sandbox)
        self.assertEqual(self.decoded_key(self.ok({"amount": 500}, key=key)["brCode"]), own)
        # one: its key
        first, said = self.connect(account, "primeira@loja.example")
        self.assertNotIn("none is its default", said)
        self.assertEqual(self.decoded_key(self.ok({"amount": 500}, key=key)["brCode"]),
                         "primeira@loja.example")
        # two, none marked: refused, saying so and what to run
        second, said = self.connect(account, "segunda@loja.example")
        self.assertIn("pixrelay bank: the account has 2 bank connections in sandbox and none is its "
                      "default: its charges are refused (409) until one is (pixrelay bank update ID --default)\n",
                      said)
        many = ("the account has several bank connections in sandbox and none is its default: mark the one "
                "its charges go to (pixrelay bank update ID --default; pixrelay bank list --env sandbox "
                "--account %s lists them)" % account)
        self.assertBad(self.create({"amount": 500}, key=key), many, 409)
        self.assertBad(self.create({"amount": 500, "externalID": "two-1"}, key=key), many, 409)
        # one marked default (bank connect --default): its key
        third, said = self.connect(account, "terceira@loja.example", "--default")
        self.assertTrue(third["default"])
        self.assertNotIn("none is its default", said)
        d = self.ok({"amount": 500, "externalID": "two-1"}, key=key)
        self.assertEqual(self.decoded_key(d["brCode"]), "terceira@loja.example")
        listed = json.loads(self.px.cli("bank", "list", "--env", "sandbox", "--account", account,
                                        "--json").stdout)["connections"]
        self.assertEqual([c["pixKey"] for c in listed if c["default"]], ["terceira@loja.example"])
        # another marked default through the API ("default": true): its key
        r = self.px.request("POST", "/v1/bank/connections", headers=auth(key),
                            body={"pixKey": "quarta@loja.example", "auth": "url-token", "default": True})
        self.assertEqual((r.status, r.json["data"]["default"]), (200, True), r)
        fourth = r.json["data"]
        self.assertEqual(self.decoded_key(self.ok({"amount": 500}, key=key)["brCode"]),
                         "quarta@loja.example")
        shown = json.loads(self.px.cli("bank", "show", third["id"], "--env", "sandbox", "--json").stdout)
        self.assertFalse(shown["default"])
        r = self.px.request("POST", "/v1/bank/connections", headers=auth(key),
                            body={"pixKey": "quinta@loja.example", "auth": "url-token", "default": "yes"})
        self.assertEqual((r.status, r.json["error"]), (400, "default: must be true or false"))
        # the default disconnected: three left, none marked
        self.px.cli("bank", "disconnect", fourth["id"], "--env", "sandbox")
        self.assertBad(self.create({"amount": 500}, key=key), many, 409)
        # down to one: its key
        for c in (first, third):
            self.px.cli("bank", "disconnect", c["id"], "--env", "sandbox")
        self.assertEqual(self.decoded_key(self.ok({"amount": 500}, key=key)["brCode"]),
                         "segunda@loja.example")
        # none again: its own key
        self.px.cli("bank", "disconnect", second["id"], "--env", "sandbox")
        self.assertEqual(self.decoded_key(self.ok({"amount": 500}, key=key)["brCode"]), own)

    def test_production_without_a_connection_is_refused(self):
        account, key = store_account(self.redis, self.px, "Sem Banco", env="production")
        r = self.create({"amount": 500}, key=key)
        self.assertBad(r, "no bank would receive this charge's Pix: the account has no bank connection in "
                          "production; connect the bank of its Pix key first (pixrelay bank connect --env "
                          "production --account %s --chave KEY ..., or POST /v1/bank/connections; "
                          "docs/banks.md)" % account, 409)
        self.assertEqual(self.px.request("GET", "/v1/charges", headers=auth(key)).json["data"]["charges"], [])
        # the account's own key is never used in production, nor pix-key (not the platform)
        p = self.start_extra(["--pix-key", "plataforma@loja.example"], "prodkey")
        self.assertEqual(self.create({"amount": 500}, key=key, px=p).status, 409)
        connect_bank(self.px, account=account, chave="sem-banco@loja.example")
        d = self.ok({"amount": 500}, key=key)
        self.assertEqual(self.decoded_key(d["brCode"]), "sem-banco@loja.example")


class ThePixKeySetting(Processes):
    """In production the pix-key setting serves only the platform account."""

    def test_the_platform_account_with_pix_key(self):
        px = self.start(["--pix-key", "plataforma@loja.example"])
        init = init_platforms(px)
        live = px.create_key("production")["key"]
        r = px.request("POST", CREATE, body={"amount": 700}, headers=auth(live))
        self.assertEqual(r.status, 200, r)
        code = r.json["data"]["brCode"]
        decoded = json.loads(px.cli("brcode", "decode", code).stdout)
        self.assertEqual(decoded["merchantAccount"]["key"], "plataforma@loja.example")
        # another production account: no bank, no charge
        account, key = store_account(self.redis, px, "Outra", env="production")
        r = px.request("POST", CREATE, body={"amount": 700}, headers=auth(key))
        self.assertEqual(r.status, 409, r)
        # without pix-key, the platform account needs a bank too
        other = self.start(name="nokey")
        r = other.request("POST", CREATE, body={"amount": 700}, headers=auth(live))
        self.assertEqual((r.status, r.json["error"]),
                         (409, "no bank would receive this charge's Pix: the account has no bank connection in "
                               "production; connect the bank of its Pix key first (pixrelay bank connect --env "
                               "production --account %s --chave KEY ..., or POST /v1/bank/connections; "
                               "docs/banks.md) or set pix-key" % init["production"]))
        # the sandbox keeps pix-key for every account
        r = px.request("POST", CREATE, body={"amount": 700}, headers=auth(px.create_key("sandbox")["key"]))
        self.assertEqual(r.status, 200, r)
        self.assertIn("plataforma@loja.example", r.json["data"]["brCode"])


class QrCode(ChargesBase):
    def test_png_decodes_to_the_br_code(self):
        d = self.ok({"amount": 4321, "comment": "QR"})
        r = self.qr("/v1/qrcode/" + d["id"])  # no Authorization header
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Content-Type"), "image/png")
        self.assertIn("max-age=", r.header("Cache-Control"))
        w, h = png_size(r.body)
        self.assertEqual(w, h)
        path = os.path.join(self.wd.path, "qr.png")
        with open(path, "wb") as f:
            f.write(r.body)
        out = subprocess.run([ZBARIMG or "zbarimg", "--raw", "-q", "--nodbus", path],
                             capture_output=True, text=True, timeout=20)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.rstrip("\n"), d["brCode"])
        # the address handed out in brCodeImageUrl is this one
        self.assertTrue(d["brCodeImageUrl"].endswith("/v1/qrcode/" + d["id"]))
        # a .png suffix is accepted
        r2 = self.qr("/v1/qrcode/%s.png" % d["id"])
        self.assertEqual(r2.status, 200)
        self.assertEqual(r2.body, r.body)

    def test_production_charge_image(self):
        d = self.ok({"amount": 900}, key=self.live)
        r = self.qr("/v1/qrcode/" + d["id"])
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "image/png")

    def test_size(self):
        d = self.ok({"amount": 500})
        small = self.qr("/v1/qrcode/%s?size=1" % d["id"])
        big = self.qr("/v1/qrcode/%s?size=20" % d["id"])
        default = self.qr("/v1/qrcode/%s" % d["id"])
        for r in (small, big, default):
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.header("Content-Type"), "image/png")
        ws, wb, wd = png_size(small.body)[0], png_size(big.body)[0], png_size(default.body)[0]
        self.assertEqual(wb, ws * 20)
        self.assertEqual(wd, ws * 8)
        for bad in ["0", "21", "abc", "", "-1", "5x", "1.5"]:
            r = self.qr("/v1/qrcode/%s?size=%s" % (d["id"], bad))
            self.assertBad(r, SIZE_MSG)

    def test_unknown_and_malformed(self):
        unknown = new_ulid()
        self.assertBad(self.qr("/v1/qrcode/" + unknown), "QR code not found: " + unknown, 404)
        self.assertBad(self.qr("/v1/qrcode/not-an-id"), "QR code not found: not-an-id", 404)
        # the message names what was asked, .png included
        self.assertBad(self.qr("/v1/qrcode/%s.png" % unknown), "QR code not found: %s.png" % unknown, 404)
        self.assertBad(self.qr("/v1/qrcode/" + unknown.lower()[:-1]),
                       "QR code not found: " + unknown.lower()[:-1], 404)


class ReadCharge(ChargesBase):
    def test_get_returns_what_create_returned(self):
        r = self.create({"amount": 777, "comment": "ler", "name": "Fulana", "document":
                         "52998224725", "externalID": "read-1"})
        self.assertEqual(r.status, 200)
        g = self.get(r.json["data"]["id"])
        self.assertEqual(g.status, 200)
        self.assertEqual(g.json, r.json)
        self.assertEqual(g.body, r.body)

    def test_not_found(self):
        unknown = new_ulid()
        self.assertBad(self.get(unknown), "charge not found: " + unknown, 404)
        self.assertBad(self.get("nope"), "charge not found: nope", 404)
        r = self.px.request("GET", "/v1/charge/pix/" + unknown)
        self.assertEqual(r.status, 401)

    def test_isolation_between_environments(self):
        s = self.ok({"amount": 500})
        p = self.ok({"amount": 500}, key=self.live)
        self.assertBad(self.get(s["id"], key=self.live), "charge not found: " + s["id"], 404)
        self.assertBad(self.get(p["id"], key=self.key), "charge not found: " + p["id"], 404)
        self.assertEqual(self.get(p["id"], key=self.live).json["data"], p)
        self.assertEqual(self.get(s["id"]).json["data"], s)

    def test_isolation_between_accounts(self):
        mine = self.ok({"amount": 500})
        theirs = self.ok({"amount": 500}, key=self.other_key)
        self.assertBad(self.get(mine["id"], key=self.other_key), "charge not found: " + mine["id"], 404)
        self.assertBad(self.get(theirs["id"]), "charge not found: " + theirs["id"], 404)
        # a master key sees an account's charges only when acting for it
        r = self.px.request("GET", "/v1/charge/pix/" + theirs["id"],
                            headers=auth(self.master, self.other))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json["data"], theirs)
        r = self.px.request("GET", "/v1/charge/pix/" + theirs["id"], headers=auth(self.master))
        self.assertEqual(r.status, 404)
        # a charge created by a master key acting for the account belongs to it
        m = self.ok({"amount": 600}, key=self.master, headers={"X-Account-ID": self.other})
        self.assertEqual(self.get(m["id"], key=self.other_key).json["data"], m)
        self.assertEqual(self.brcode_fields(m["brCode"])[1]["01"], self.other_pix_key)


class ExternalId(ChargesBase):
    def test_same_request_same_charge(self):
        body = {"amount": 1500, "externalID": "wc_order_77", "expiration": 3600,
                "comment": "Pedido 77", "name": "Fulano", "document": "529.982.247-25"}
        first = self.create(body)
        self.assertEqual(first.status, 200)
        time.sleep(1.05)  # a second later: timestamps would differ for a new charge
        again = self.create(body)
        self.assertEqual(again.status, 200)
        self.assertEqual(again.json, first.json)
        # the document normalised is the same data
        body2 = dict(body, document="52998224725")
        self.assertEqual(self.create(body2).json, first.json)

    def test_omitted_default_equals_explicit_default(self):
        a = self.ok({"amount": 1500, "externalID": "ext-default"})
        b = self.ok({"amount": 1500, "externalID": "ext-default", "expiration": 86400})
        self.assertEqual(a["id"], b["id"])

    def test_different_data_is_a_conflict(self):
        first = self.ok({"amount": 1500, "externalID": "wc_order_78"})
        msg = ("externalID: already used by charge %s with different data; send the same "
               "request to get that charge again, or use a new externalID" % first["id"])
        self.refused({"amount": 1600, "externalID": "wc_order_78"}, msg)
        self.refused({"amount": 1500, "externalID": "wc_order_78", "comment": "x"}, msg)
        self.refused({"amount": 1500, "externalID": "wc_order_78", "expiration": 3600}, msg)
        self.refused({"amount": 1500, "externalID": "wc_order_78",
                      "postbackUrl": "https://shop.example.com/hook"}, msg)
        # the original is unchanged
        self.assertEqual(self.get(first["id"]).json["data"], first)

    def test_scoped_to_environment_and_account(self):
        s = self.ok({"amount": 1500, "externalID": "wc_order_79"})
        p = self.ok({"amount": 1500, "externalID": "wc_order_79"}, key=self.live)
        o = self.ok({"amount": 1500, "externalID": "wc_order_79"}, key=self.other_key)
        self.assertEqual(len({s["id"], p["id"], o["id"]}), 3)
        # different data under the same reference elsewhere is not a conflict either
        self.ok({"amount": 9900, "externalID": "wc_order_80"})
        self.ok({"amount": 1100, "externalID": "wc_order_80"}, key=self.live)
        self.assertEqual(self.ok({"amount": 1500, "externalID": "wc_order_79"}, key=self.live)["id"],
                         p["id"])

    def test_no_external_id_makes_new_charges(self):
        a = self.ok({"amount": 1500})
        b = self.ok({"amount": 1500})
        self.assertNotEqual(a["id"], b["id"])

    def test_concurrent_creates_make_one_charge(self):
        body = {"amount": 2500, "externalID": "race-%d" % random.randrange(10 ** 9)}
        barrier = threading.Barrier(20)
        results = [None] * 20

        def worker(i):
            barrier.wait(10)
            try:
                results[i] = self.create(body)
            except Exception as e:  # noqa: BLE001 - reported below
                results[i] = e

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        for r in results:
            self.assertNotIsInstance(r, Exception, r)
            self.assertEqual(r.status, 200, r)
        ids = {r.json["data"]["id"] for r in results}
        self.assertEqual(len(ids), 1, ids)
        bodies = {r.body for r in results}
        self.assertEqual(len(bodies), 1)
        self.assertEqual(self.get(ids.pop()).status, 200)


if __name__ == "__main__":
    unittest.main(verbosity=2)
