"""The tests' bank (testbank.py) checked with a plain client: urllib's
http.client over ssl, nothing of pixrelay. Mutual TLS, the OAuth2 token
flow, charges and their BR Codes (decoded here by a reader of the test's
own), Pix, paging, refunds, the webhook to a receiver that demands the
bank's client certificate, and the failure knobs. No pixrelay, no Redis."""
import base64
import binascii
import datetime
import http.client
import itertools
import json
import shutil
import ssl
import tempfile
import threading
import time
import unittest
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import bcb
import certs
from testbank import TestBank

TXID = "pixrelay0charge0txid000000001"
_txids = itertools.count(1)
KEY = "pagamentos@loja.example"


def wait_for(pred, timeout=5.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


# ---------------------------------------------------------------------------
# A BR Code reader of the test's own: strict TLV, CRC with binascii.

def tlv(text):
    """{id: value} of one TLV level; ValueError when a length runs past the
    end or a field repeats."""
    out, i = {}, 0
    while i < len(text):
        if i + 4 > len(text) or not text[i:i + 4].isdigit():
            raise ValueError("bad TLV header at %d" % i)
        tag, n = text[i:i + 2], int(text[i + 2:i + 4])
        if i + 4 + n > len(text):
            raise ValueError("field %s runs past the end" % tag)
        if tag in out:
            raise ValueError("field %s repeats" % tag)
        out[tag] = text[i + 4:i + 4 + n]
        i += 4 + n
    return out


def decode_br_code(code):
    """The fields of a BR Code, 26 and 62 decoded too; ValueError when the
    TLV is broken or the CRC (CRC-16/CCITT-FALSE over everything up to and
    including "6304") is wrong."""
    fields = tlv(code)
    if list(fields)[-1] != "63" or not code.endswith("6304" + fields["63"]) or len(fields["63"]) != 4:
        raise ValueError("the code does not end with 6304 and 4 hex digits")
    crc = "%04X" % binascii.crc_hqx(code[:-4].encode("ascii"), 0xFFFF)
    if crc != fields["63"]:
        raise ValueError("CRC %s, computed %s" % (fields["63"], crc))
    fields["26"] = tlv(fields["26"])
    fields["62"] = tlv(fields["62"])
    return fields


# ---------------------------------------------------------------------------
# A plain client and a webhook receiver.

class Client:
    def __init__(self, bank, cert, server_ca=None):
        self.bank = bank
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.ctx.load_verify_locations(server_ca or bank.server_ca)
        if cert:
            self.ctx.load_cert_chain(cert.cert, cert.key)
        self._token = None

    def raw(self, method, url, body=None, headers=None, timeout=10):
        """(status, headers, body bytes)."""
        parts = urllib.parse.urlsplit(url)
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout, context=self.ctx)
        try:
            target = parts.path + ("?" + parts.query if parts.query else "")
            conn.request(method, target, body, headers or {})
            resp = conn.getresponse()
            return resp.status, resp.headers, resp.read()
        finally:
            conn.close()

    def token_call(self, client_id=None, secret=None, form="grant_type=client_credentials", basic=True):
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if basic:
            pair = "%s:%s" % (client_id or self.bank.client_id, secret or self.bank.client_secret)
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        status, hdrs, body = self.raw("POST", self.bank.token_url, form, headers)
        return status, hdrs, json.loads(body)

    def token(self, **kw):
        status, _, body = self.token_call(**kw)
        assert status == 200, body
        self._token = body["access_token"]
        return self._token

    def call(self, method, path, obj=None, token=True, headers=None, raw_body=None):
        """(status, headers, decoded JSON or None) of an API call."""
        hdrs = dict(headers or {})
        if token is True:
            token = self._token or self.token()
        if token:
            hdrs["Authorization"] = "Bearer " + token
        body = raw_body
        if obj is not None:
            body = json.dumps(obj).encode()
            hdrs.setdefault("Content-Type", "application/json")
        status, rh, data = self.raw(method, self.bank.url + path, body, hdrs)
        return status, rh, (json.loads(data) if data else None)


class Receiver:
    """A tiny HTTPS server that demands a client certificate from `ca` and
    records (path, body, client CN) of each request; answers 200."""

    def __init__(self, cert, ca):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert.cert, cert.key)
        ctx.load_verify_locations(ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
        self.got = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                cn = dict(x[0] for x in self.connection.getpeercert()["subject"])["commonName"]
                with receiver.lock:
                    receiver.got.append((self.path, body, cn, self.headers.get("Content-Type")))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def url(self, path):
        return "https://127.0.0.1:%d%s" % (self.server.server_address[1], path)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------------------

D = None   # the certificates' directory
CA = CLIENT = FOREIGN = RECEIVER_CA = RECEIVER_CERT = None


def setUpModule():
    global D, CA, CLIENT, FOREIGN, RECEIVER_CA, RECEIVER_CERT
    D = tempfile.mkdtemp(prefix="pixrelay-testbank-test-")
    CA = certs.make_ca(D, "merchant-ca", "Merchant CA")
    CLIENT = certs.make_client(D, CA, "pixrelay", "pixrelay merchant")
    FOREIGN = certs.make_foreign_client(D)
    RECEIVER_CA = certs.make_ca(D, "receiver-ca", "Webhook Receiver CA")
    RECEIVER_CERT = certs.make_server(D, RECEIVER_CA, "receiver")


def tearDownModule():
    shutil.rmtree(D, ignore_errors=True)


def cob_body(valor="10.00", **extra):
    return dict({"calendario": {"expiracao": 3600}, "valor": {"original": valor},
                 "chave": KEY, "solicitacaoPagador": "Pedido 42"}, **extra)


class BankCase(unittest.TestCase):
    """One bank for the class; every test ends with no violation left."""
    bank = None

    @classmethod
    def setUpClass(cls):
        BankCase.bank = cls.bank = TestBank(client_ca=CA.cert, receiver_ca=RECEIVER_CA.cert,
                                            keys=[KEY, "+5511999990000"],
                                            seed=1).start()
        cls.client = Client(cls.bank, CLIENT)

    @classmethod
    def tearDownClass(cls):
        cls.bank.close()

    def tearDown(self):
        self.assertEqual(self.bank.take_violations(), [])

    def assert_problem(self, got, status, tipo, violated=None):
        code, _, body = got
        self.assertEqual(code, status, body)
        bcb.validate("Problema", body)
        self.assertEqual(body["type"], "https://pix.bcb.gov.br/api/v2/error/" + tipo)
        self.assertEqual(body["status"], status)
        if violated is not None:
            self.assertIn(violated, [v["propriedade"] for v in body.get("violacoes", [])], body)
        return body


class Tls(BankCase):
    def test_handshake_refused_without_a_client_certificate(self):
        before = len(self.bank.handshake_failures)
        with self.assertRaises((ssl.SSLError, ConnectionError)):
            Client(self.bank, None).token_call()
        self.assertEqual(self.bank.count("POST /oauth/token"), 0)
        wait_for(lambda: len(self.bank.handshake_failures) > before, what="the handshake failure")
        self.assertIn("PEER_DID_NOT_RETURN_A_CERTIFICATE", self.bank.handshake_failures[before])

    def test_handshake_refused_with_a_certificate_of_another_ca(self):
        before = len(self.bank.handshake_failures)
        with self.assertRaises((ssl.SSLError, ConnectionError)):
            Client(self.bank, FOREIGN).token_call()
        wait_for(lambda: len(self.bank.handshake_failures) > before, what="the handshake failure")
        self.assertIn("CERTIFICATE_VERIFY_FAILED", self.bank.handshake_failures[before])

    def test_server_certificate_verifies_for_127_0_0_1(self):
        status, _, body = Client(self.bank, CLIENT).token_call()
        self.assertEqual(status, 200)
        with self.assertRaises(ssl.SSLCertVerificationError):
            Client(self.bank, CLIENT, server_ca=RECEIVER_CA.cert).token_call()
        self.assertEqual(self.bank.log[-1].client, "pixrelay merchant")


class Tokens(BankCase):
    def test_token_flow(self):
        status, hdrs, body = self.client.token_call()
        self.assertEqual(status, 200)
        self.assertEqual(set(body), {"access_token", "token_type", "expires_in", "scope"})
        self.assertEqual(body["token_type"], "Bearer")
        self.assertEqual(body["expires_in"], 3600)
        self.assertEqual(body["scope"].split(), sorted(
            ["cob.write", "cob.read", "cobv.write", "cobv.read", "pix.write", "pix.read", "webhook.write",
             "webhook.read", "payloadlocationrec.write", "payloadlocationrec.read", "rec.write",
             "rec.read", "webhookrec.write", "webhookrec.read", "cobr.write", "cobr.read",
             "webhookcobr.write", "webhookcobr.read"]))
        self.assertEqual(hdrs["Cache-Control"], "no-store")
        status, _, cob = self.client.call("PUT", "/cob/" + TXID + "tok", cob_body(), token=body["access_token"])
        self.assertEqual(status, 201, cob)

    def test_wrong_credentials_401_invalid_client(self):
        for kw in ({"secret": "wrong"}, {"client_id": "nobody"}, {"basic": False}):
            with self.subTest(**kw):
                status, hdrs, body = self.client.token_call(**kw)
                self.assertEqual(status, 401)
                self.assertEqual(body["error"], "invalid_client")
                self.assertTrue(hdrs["WWW-Authenticate"].startswith("Basic"))

    def test_grant_type_and_scopes(self):
        status, _, body = self.client.token_call(form="grant_type=password")
        self.assertEqual((status, body["error"]), (400, "unsupported_grant_type"))
        status, _, body = self.client.token_call(form="grant_type=client_credentials&scope=cob.read+nope")
        self.assertEqual((status, body["error"]), (400, "invalid_scope"))
        self.assertEqual([v.endpoint for v in self.bank.take_violations()], ["POST /oauth/token"] * 2)
        status, _, body = self.client.token_call(form="grant_type=client_credentials&scope=cob.read")
        self.assertEqual((status, body["scope"]), (200, "cob.read"))
        got = self.client.call("PUT", "/cob/" + TXID + "scope", cob_body(), token=body["access_token"])
        self.assert_problem(got, 403, "AcessoNegado")

    def test_401_without_or_with_a_bad_token(self):
        for token in (None, "not-a-token"):
            with self.subTest(token=token):
                got = self.client.call("GET", "/cob/" + TXID, token=token)
                body = self.assert_problem(got, 401, "AcessoNegado")
                self.assertIn("Bearer", got[1]["WWW-Authenticate"])
                self.assertIn("missing" if token is None else "unknown", body["detail"])

    def test_expiry_and_revocation(self):
        self.bank.token_ttl = 0.3
        try:
            status, _, body = self.client.token_call()
            self.assertEqual(body["expires_in"], 1)
            token = body["access_token"]
            self.assertEqual(self.client.call("GET", "/webhook/" + self.bank.key, token=token)[0], 404)
            time.sleep(0.4)
            body = self.assert_problem(self.client.call("GET", "/webhook/" + self.bank.key, token=token),
                                       401, "AcessoNegado")
            self.assertIn("expired", body["detail"])
        finally:
            self.bank.token_ttl = 3600
        token = self.client.token()
        self.bank.revoke_tokens()
        body = self.assert_problem(self.client.call("GET", "/webhook/" + self.bank.key, token=token),
                                   401, "AcessoNegado")
        self.assertIn("revoked", body["detail"])


class BrCodeReader(unittest.TestCase):
    """The test's reader, on the vectors of the reference (pix-facts.md)."""

    def test_vectors(self):
        self.assertEqual("%04X" % binascii.crc_hqx(b"123456789", 0xFFFF), "29B1")
        good = [
            "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913"
            "Fulano de Tal6008BRASILIA62070503***63041D3D",
            "00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a99"
            "5204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB",
        ]
        for code in good:
            self.assertEqual(decode_br_code(code)["62"]["05"], "***")
        self.assertEqual(decode_br_code(good[1])["26"]["25"], "pix.example.com/qr/93598be0-1bd0-4997-8318-"
                                                              "81776a1d8a99")
        with self.assertRaisesRegex(ValueError, "CRC"):
            decode_br_code(good[0].replace("Fulano", "Fulana"))
        with self.assertRaisesRegex(ValueError, "runs past the end"):
            decode_br_code("00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907"
                           "EMPRESA6008BRASILIA62080503***6304170E")


class Cob(BankCase):
    def test_create_read_and_its_br_code(self):
        status, hdrs, cob = self.client.call("PUT", "/cob/" + TXID, cob_body())
        self.assertEqual(status, 201, cob)
        self.assertEqual(hdrs["Content-Type"], "application/json")
        bcb.validate("CobGerada", cob)
        self.assertEqual((cob["status"], cob["revisao"], cob["txid"]), ("ATIVA", 0, TXID))
        self.assertEqual(cob["location"], cob["loc"]["location"])
        self.assertRegex(cob["location"], r"^qr\.testbank\.example/qr/v2/cob/[0-9a-f]{32}$")
        created = datetime.datetime.fromisoformat(cob["calendario"]["criacao"])
        self.assertLess(abs(time.time() - created.timestamp()), 5)
        code = decode_br_code(cob["pixCopiaECola"])
        self.assertEqual((code["00"], code["01"], code["52"], code["53"], code["54"], code["58"]),
                         ("01", "12", "0000", "986", "10.00", "BR"))
        self.assertEqual(code["26"], {"00": "br.gov.bcb.pix", "25": cob["location"]})
        self.assertEqual(code["62"], {"05": "***"})
        self.assertEqual((code["59"], code["60"]), ("LOJA DE TESTE", "SAO PAULO"))

        status, _, same = self.client.call("PUT", "/cob/" + TXID, cob_body())
        self.assertEqual((status, same), (201, cob))
        status, _, got = self.client.call("GET", "/cob/" + TXID)
        self.assertEqual(status, 200)
        bcb.validate("CobCompleta", got)
        self.assertEqual(got, cob)

    def test_revision_and_history(self):
        txid = TXID + "rev"
        first = self.client.call("PUT", "/cob/" + txid, cob_body())[2]
        status, _, second = self.client.call("PUT", "/cob/" + txid, cob_body("12.50"))
        self.assertEqual((status, second["revisao"], second["valor"]["original"]), (201, 1, "12.50"))
        self.assertEqual(second["loc"], first["loc"])
        self.assertEqual(decode_br_code(second["pixCopiaECola"])["54"], "12.50")
        self.assertEqual(self.client.call("GET", "/cob/%s?revisao=0" % txid)[2], first)
        self.assertEqual(self.client.call("GET", "/cob/%s?revisao=1" % txid)[2], second)
        self.assert_problem(self.client.call("GET", "/cob/%s?revisao=7" % txid), 400, "CobConsultaInvalida",
                            "revisao")
        self.assertEqual([v.kind for v in self.bank.take_violations()], ["rule"])

    def test_unknown_txid_404(self):
        self.assert_problem(self.client.call("GET", "/cob/" + TXID + "nope"), 404, "CobNaoEncontrado")

    def test_schema_invalid_cob_is_refused_and_recorded(self):
        body = cob_body()
        body["valor"] = {"original": "10"}
        del body["calendario"]
        got = self.client.call("PUT", "/cob/" + TXID + "bad", body)
        problem = self.assert_problem(got, 400, "CobOperacaoInvalida", "cob.valor.original")
        self.assertIn("cob", [v["propriedade"] for v in problem["violacoes"]])
        [v] = self.bank.take_violations()
        self.assertEqual((v.where, v.kind, v.endpoint, v.status), ("request", "schema", "PUT /cob/{txid}", 400))
        self.assertEqual(v.errors, [("$", "'calendario' is a required property"),
                                    ("$.valor.original", "'10' does not match '\\\\d{1,10}\\\\.\\\\d{2}'")])
        self.assertIsNone(self.bank.cob(TXID + "bad"))

    def test_rules_beyond_the_schema(self):
        cases = [("/cob/" + "a" * 40, cob_body(), "txid"),                       # TxId is unanchored
                 ("/cob/short", cob_body(), "txid"),                              # fails the schema too
                 ("/cob/" + TXID + "key", cob_body(chave="other@bank.example"), "cob.chave"),
                 ("/cob/" + TXID + "val", cob_body("R$ 10.00"), "cob.valor.original")]
        for path, body, prop in cases:
            with self.subTest(path=path):
                self.assert_problem(self.client.call("PUT", path, body), 400, "CobOperacaoInvalida", prop)
        self.assertEqual([v.kind for v in self.bank.take_violations()], ["rule", "schema", "rule", "rule"])
        got = self.client.call("PUT", "/cob/" + TXID + "ct", raw_body=json.dumps(cob_body()).encode(),
                               headers={"Content-Type": "text/plain"})
        self.assert_problem(got, 400, "CobOperacaoInvalida")
        self.assertEqual(len(self.bank.take_violations()), 1)

    def test_method_and_path_not_in_the_api(self):
        self.assert_problem(self.client.call("POST", "/cob/" + TXID, cob_body()), 405, "RequisicaoInvalida")
        self.assert_problem(self.client.call("GET", "/lotecobv/1"), 404, "NaoEncontrado")
        # a cobv the bank does not know: the standard's own 404
        self.assert_problem(self.client.call("GET", "/cobv/" + TXID), 404, "CobVNaoEncontrada")


class Pix(BankCase):
    def make_cob(self, txid, valor="10.00"):
        status, _, cob = self.client.call("PUT", "/cob/" + txid, cob_body(valor))
        self.assertEqual(status, 201, cob)
        return cob

    def test_pay_then_get_pix(self):
        txid = TXID + "pay"
        self.make_cob(txid)
        when = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        pix = self.bank.pay(txid, info="obrigado", when=when)
        self.assertRegex(pix["endToEndId"], r"^E12345678\d{12}[a-zA-Z0-9]{11}$")
        self.assertEqual(pix["endToEndId"][9:21], when.strftime("%Y%m%d%H%M"))
        self.assertEqual((pix["txid"], pix["valor"], pix["chave"], pix["infoPagador"]),
                         (txid, "10.00", self.bank.key, "obrigado"))
        status, _, cob = self.client.call("GET", "/cob/" + txid)
        self.assertEqual((cob["status"], cob["pix"]), ("CONCLUIDA", [pix]))
        with self.assertRaisesRegex(ValueError, "CONCLUIDA"):
            self.bank.pay(txid)

        status, _, got = self.client.call("GET", "/pix/" + pix["endToEndId"])
        self.assertEqual((status, got), (200, pix))
        window = "inicio=%s&fim=%s" % (urllib.parse.quote((when - datetime.timedelta(minutes=1)).isoformat()),
                                       urllib.parse.quote((when + datetime.timedelta(minutes=1)).isoformat()))
        status, _, listed = self.client.call("GET", "/pix?" + window)
        self.assertEqual(status, 200)
        self.assertEqual(listed["pix"], [pix])
        self.assertEqual(listed["parametros"]["paginacao"], {"paginaAtual": 0, "itensPorPagina": 100,
                                                             "quantidadeDePaginas": 1,
                                                             "quantidadeTotalDeItens": 1})
        self.assertEqual(self.client.call("GET", "/pix?%s&txid=%s" % (window, txid))[2]["pix"], [pix])
        self.assertEqual(self.client.call("GET", "/pix?%s&txIdPresente=false" % window)[2]["pix"], [])
        self.assertEqual(self.client.call("GET", "/pix?%s&cpf=52998224725" % window)[2]["pix"], [])

        # a concluded charge may not be changed
        self.assert_problem(self.client.call("PUT", "/cob/" + txid, cob_body("11.00")), 400,
                            "CobOperacaoInvalida")
        self.assertEqual(len(self.bank.take_violations()), 1)
        self.assert_problem(self.client.call("GET", "/pix/E" + "0" * 31), 404, "PixNaoEncontrado")

    def test_paging_at_1000(self):
        day = datetime.datetime(2024, 3, 5, 12, 0, tzinfo=datetime.timezone.utc)
        for i in range(1001):
            self.bank.pay_key("1.%02d" % (i % 100), when=day + datetime.timedelta(seconds=i))
        window = "inicio=2024-03-05T00:00:00Z&fim=2024-03-05T23:59:59Z"
        status, _, p0 = self.client.call("GET", "/pix?%s&paginacao.itensPorPagina=1000" % window)
        self.assertEqual(status, 200, p0)
        self.assertEqual(len(p0["pix"]), 1000)
        self.assertEqual(p0["parametros"]["paginacao"], {"paginaAtual": 0, "itensPorPagina": 1000,
                                                         "quantidadeDePaginas": 2,
                                                         "quantidadeTotalDeItens": 1001})
        status, _, p1 = self.client.call("GET", "/pix?%s&paginacao.itensPorPagina=1000"
                                                "&paginacao.paginaAtual=1" % window)
        self.assertEqual(len(p1["pix"]), 1)
        self.assertEqual(p1["pix"][0]["horario"], "2024-03-05T12:16:40.000Z")
        self.assertNotIn("txid", p1["pix"][0])
        e2es = {p["endToEndId"] for p in p0["pix"] + p1["pix"]}
        self.assertEqual(len(e2es), 1001)
        status, _, d = self.client.call("GET", "/pix?" + window)
        self.assertEqual((len(d["pix"]), d["parametros"]["paginacao"]["quantidadeDePaginas"]), (100, 11))
        self.assertEqual(self.client.call("GET", "/pix?%s&paginacao.paginaAtual=11" % window)[2]["pix"], [])

        self.assert_problem(self.client.call("GET", "/pix?%s&paginacao.itensPorPagina=1001" % window),
                            400, "PixConsultaInvalida", "paginacao.itensPorPagina")
        self.assert_problem(self.client.call("GET", "/pix?fim=2024-03-05T00:00:00Z"), 400,
                            "PixConsultaInvalida", "inicio")
        self.assert_problem(self.client.call("GET", "/pix?inicio=2024-03-06T00:00:00Z&fim=2024-03-05T00:00:00Z"),
                            400, "PixConsultaInvalida", "fim")
        self.assertEqual([v.kind for v in self.bank.take_violations()], ["schema", "schema", "rule"])

    def test_a_bank_that_keeps_its_list_so_long(self):
        # history_days: an inicio older than that is refused, a 400 that is
        # the bank's own limit, not a violation of the caller's
        now = datetime.datetime.now(datetime.timezone.utc)
        old = self.bank.pay_key("2.00", when=now - datetime.timedelta(days=9))
        stamp = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
        ten = "inicio=%s&fim=%s" % (stamp(now - datetime.timedelta(days=10)), stamp(now))
        six = "inicio=%s&fim=%s" % (stamp(now - datetime.timedelta(days=6)), stamp(now))
        self.bank.history_days = 7
        try:
            body = self.assert_problem(self.client.call("GET", "/pix?" + ten), 400,
                                       "PixConsultaInvalida", "inicio")
            self.assertEqual(body["detail"], "o parâmetro inicio é anterior ao período de consulta "
                             "disponível (7 dias).")
            status, _, listed = self.client.call("GET", "/pix?" + six)
            self.assertEqual(status, 200, listed)
        finally:
            self.bank.history_days = None
        status, _, listed = self.client.call("GET", "/pix?" + ten)
        self.assertIn(old["endToEndId"], [p["endToEndId"] for p in listed["pix"]])
        self.assertEqual(self.bank.take_violations(), [])

    def test_filters_by_payer_and_txid(self):
        day = "2024-04-01T10:00:00-03:00"
        a = self.bank.pay_key("2.00", when=day, pagador={"cpf": "52998224725"}, txid="estatico1")
        b = self.bank.pay_key("3.00", chave="+5511999990000", when=day, pagador={"cnpj": "11222333000181"})
        window = "inicio=2024-04-01T13:00:00Z&fim=2024-04-01T13:00:00Z"
        listed = lambda q: self.client.call("GET", "/pix?%s&%s" % (window, q))[2]["pix"]  # noqa: E731
        self.assertEqual(listed("cpf=52998224725"), [a])
        self.assertEqual(listed("cnpj=11222333000181"), [b])
        self.assertEqual(listed("txid=estatico1"), [a])
        self.assertEqual(listed("txIdPresente=false"), [b])
        self.assertEqual(a["horario"], "2024-04-01T13:00:00.000Z")
        self.assert_problem(self.client.call("GET", "/pix?%s&cpf=52998224725&cnpj=11222333000181" % window),
                            400, "PixConsultaInvalida", "cnpj")
        self.assert_problem(self.client.call("GET", "/pix?%s&cpf=529.982.247-25" % window),
                            400, "PixConsultaInvalida", "cpf")
        self.assertEqual([v.kind for v in self.bank.take_violations()], ["rule", "schema"])

    def test_refund_flow(self):
        txid = TXID + "dev"
        self.make_cob(txid, "30.00")
        e2e = self.bank.pay(txid)["endToEndId"]
        path = "/pix/%s/devolucao/" % e2e
        status, _, dev = self.client.call("PUT", path + "d1", {"valor": "10.00"})
        self.assertEqual(status, 201, dev)
        bcb.validate("Devolucao", dev)
        self.assertEqual((dev["id"], dev["valor"], dev["status"], dev["natureza"]),
                         ("d1", "10.00", "EM_PROCESSAMENTO", "ORIGINAL"))
        self.assertRegex(dev["rtrId"], r"^D99999999\d{12}[a-zA-Z0-9]{11}$")
        self.assertEqual(self.client.call("PUT", path + "d1", {"valor": "10.00"})[2], dev)
        self.assertEqual(self.client.call("GET", "/pix/" + e2e)[2]["devolucoes"], [dev])

        self.assert_problem(self.client.call("PUT", path + "d2", {"valor": "20.01"}), 400,
                            "PixDevolucaoInvalida", "devolucao.valor")
        self.assert_problem(self.client.call("PUT", path + "d1", {"valor": "5.00"}), 400,
                            "PixDevolucaoInvalida", "id")
        self.assert_problem(self.client.call("PUT", path + "d3", {"valor": 5}), 400,
                            "PixDevolucaoInvalida", "devolucao.valor")
        self.assertEqual([v.kind for v in self.bank.take_violations()], ["rule", "rule", "schema"])
        self.assert_problem(self.client.call("PUT", "/pix/E%s/devolucao/d1" % ("1" * 31), {"valor": "1.00"}),
                            404, "PixNaoEncontrado")

        done = self.bank.settle_refund(e2e, "d1")
        self.assertEqual(done["status"], "DEVOLVIDO")
        self.assertIn("liquidacao", done["horario"])
        status, _, got = self.client.call("GET", path + "d1")
        self.assertEqual((status, got), (200, done))
        status, _, d2 = self.client.call("PUT", path + "d2", {"valor": "20.00", "descricao": "o resto"})
        self.assertEqual(status, 201, d2)
        failed = self.bank.settle_refund(e2e, "d2", "NAO_REALIZADO", motivo="saldo insuficiente")
        self.assertEqual(self.client.call("GET", "/pix/" + e2e)[2]["devolucoes"], [done, failed])
        self.assert_problem(self.client.call("GET", path + "zz"), 404, "PixDevolucaoNaoEncontrada")


class Webhook(BankCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.receiver = Receiver(RECEIVER_CERT, cls.bank.webhook_ca)

    @classmethod
    def tearDownClass(cls):
        cls.receiver.close()
        super().tearDownClass()

    def setUp(self):
        with self.receiver.lock:
            self.receiver.got.clear()
        self.bank.webhook_faults()

    def register(self, url, chave=None):
        chave = chave or self.bank.key
        status, _, body = self.client.call("PUT", "/webhook/" + urllib.parse.quote(chave, safe=""),
                                           {"webhookUrl": url})
        self.assertEqual((status, body), (200, None))

    def paid(self, n=1):
        out = []
        for i in range(n):
            txid = "%shook%d" % (TXID, next(_txids))
            self.client.call("PUT", "/cob/" + txid, cob_body())
            out.append(self.bank.pay(txid))
        return out

    def test_register_read_delete(self):
        self.register(self.receiver.url("/hook"), "+5511999990000")
        status, _, hook = self.client.call("GET", "/webhook/%2B5511999990000")
        self.assertEqual(status, 200)
        bcb.validate("WebhookCompleto", hook)
        self.assertEqual((hook["webhookUrl"], hook["chave"]), (self.receiver.url("/hook"), "+5511999990000"))
        self.assertEqual(self.client.call("DELETE", "/webhook/%2B5511999990000")[:1], (204,))
        self.assert_problem(self.client.call("GET", "/webhook/%2B5511999990000"), 404, "WebhookNaoEncontrado")
        self.assert_problem(self.client.call("PUT", "/webhook/other@bank.example",
                                             {"webhookUrl": self.receiver.url("/x")}),
                            400, "WebhookOperacaoInvalida", "chave")
        self.assert_problem(self.client.call("PUT", "/webhook/" + self.bank.key, {"webhookUrl": "http://h/x"}),
                            400, "WebhookOperacaoInvalida", "webhook.webhookUrl")
        self.assert_problem(self.client.call("PUT", "/webhook/" + self.bank.key, {"webhookUrl": "not a url"}),
                            400, "WebhookOperacaoInvalida", "webhook.webhookUrl")
        self.assertEqual([v.kind for v in self.bank.take_violations()], ["rule", "rule", "schema"])

    def test_notify_over_mutual_tls(self):
        self.register(self.receiver.url("/hook"))
        pix = self.paid(2)
        sent = self.bank.notify([p["endToEndId"] for p in pix])
        self.assertEqual([(d.status, d.copy, d.error) for d in sent], [(200, 1, None)])
        self.assertEqual(sent[0].url, self.receiver.url("/hook/pix"))
        [(path, body, cn, ctype)] = self.receiver.got
        self.assertEqual((path, cn, ctype), ("/hook/pix", "testbank webhook", "application/json"))
        self.assertEqual(bcb.validate_webhook_body(body), {"pix": pix})
        self.assertEqual(sent[0].answer, b"{}")

    def test_pix_appended_to_the_whole_url_query_included(self):
        self.register(self.receiver.url("/v1/webhooks/bank/bnk_1?hmac=s3cr3t&ignorar="))
        self.bank.notify([self.paid()[0]["endToEndId"]])
        self.assertEqual(self.receiver.got[0][0], "/v1/webhooks/bank/bnk_1?hmac=s3cr3t&ignorar=/pix")

    def test_knobs_drop_twice_delay(self):
        self.register(self.receiver.url("/hook"))
        pix = self.paid(3)
        self.bank.webhook_faults(drop=1.0)
        [d] = self.bank.notify([pix[0]["endToEndId"]])
        self.assertTrue(d.dropped)
        self.bank.webhook_faults(twice=1.0)
        self.assertEqual([d.copy for d in self.bank.notify([pix[1]["endToEndId"]])], [1, 2])
        self.bank.webhook_faults(delay=1.0, delay_seconds=0.8)
        started = time.monotonic()
        late = self.bank.notify([pix[2]["endToEndId"]], wait=False)
        self.bank.webhook_faults()
        self.bank.notify([pix[0]["endToEndId"]])
        self.bank.wait_deliveries(len(self.bank.deliveries), timeout=5)
        self.assertGreaterEqual(late[0].sent_at, started + 0.8)
        order = [json.loads(b)["pix"][0]["endToEndId"] for _, b, _, _ in self.receiver.got]
        self.assertEqual(order, [pix[1]["endToEndId"]] * 2 + [pix[0]["endToEndId"], pix[2]["endToEndId"]])

    def test_seeded_drops_are_reproducible(self):
        self.register(self.receiver.url("/hook"))
        e2e = self.paid()[0]["endToEndId"]
        runs = []
        for _ in range(2):
            self.bank.webhook_faults(drop=0.5, seed=42)
            runs.append([d.dropped for e in range(8) for d in self.bank.notify([e2e])])
        self.assertEqual(runs[0], runs[1])
        self.assertTrue(any(runs[0]) and not all(runs[0]), runs[0])

    def test_receiver_that_does_not_trust_the_bank(self):
        other = Receiver(RECEIVER_CERT, CA.cert)   # trusts the merchant CA, not the bank's webhook CA
        try:
            self.register(other.url("/hook"))
            [d] = self.bank.notify([self.paid()[0]["endToEndId"]])
            self.assertIsNone(d.status)
            self.assertRegex(d.error, "SSL|Connection|Broken")
            self.assertEqual(other.got, [])
        finally:
            other.close()

    def test_body_checked_before_sending(self):
        self.register(self.receiver.url("/hook"))
        bad = dict(self.paid()[0], valor="10")
        with self.assertRaises(bcb.SpecViolation):
            self.bank.notify([bad])
        [d] = self.bank.notify([bad], validate=False)
        self.assertEqual((d.status, json.loads(self.receiver.got[0][1])["pix"][0]["valor"]), (200, "10"))

    def test_no_webhook_for_the_key(self):
        self.client.call("DELETE", "/webhook/" + self.bank.key)
        with self.assertRaisesRegex(ValueError, "no webhook"):
            self.bank.notify([self.paid()[0]["endToEndId"]])

    def test_auto_notify(self):
        self.register(self.receiver.url("/auto"))
        self.bank.auto_notify = True
        try:
            pix = self.paid()[0]
            self.bank.wait_deliveries(len(self.bank.deliveries))
            self.assertEqual(json.loads(self.receiver.got[-1][1]), {"pix": [pix]})
            self.client.call("PUT", "/pix/%s/devolucao/r1" % pix["endToEndId"], {"valor": "1.00"})
            self.bank.settle_refund(pix["endToEndId"], "r1")
            self.bank.wait_deliveries(len(self.bank.deliveries))
            self.assertEqual(json.loads(self.receiver.got[-1][1])["pix"][0]["devolucoes"][0]["status"],
                             "DEVOLVIDO")
        finally:
            self.bank.auto_notify = False


class Knobs(BankCase):
    def test_503(self):
        self.client.token()
        self.bank.down(mode="503")
        try:
            got = self.client.call("GET", "/cob/" + TXID)
            self.assert_problem(got, 503, "ServicoIndisponivel")
            self.assertEqual(got[1]["Retry-After"], "60")
            self.assertEqual(self.client.token_call()[:1], (503,))
        finally:
            self.bank.up()
        self.assertEqual(self.client.call("GET", "/cob/" + TXID)[0], 404)

    def test_refuse_for_a_while_on_the_same_port(self):
        self.client.token()
        port = self.bank.port
        self.bank.down(0.4)
        with self.assertRaises(ConnectionRefusedError):
            self.client.call("GET", "/cob/" + TXID)
        self.assertEqual(self.bank.port, port)

        def back():
            try:
                return self.client.call("GET", "/cob/" + TXID)[0] == 404
            except ConnectionRefusedError:
                return False
        started = time.monotonic()
        wait_for(back, what="the bank to be back")
        self.assertGreater(time.monotonic() - started, 0.2)

    def test_close_without_an_answer(self):
        self.client.token()
        self.bank.down(mode="close")
        try:
            with self.assertRaises((http.client.RemoteDisconnected, ConnectionError, ssl.SSLError)):
                self.client.call("GET", "/cob/" + TXID)
        finally:
            self.bank.up()

    def test_slow_and_counters(self):
        self.client.token()
        before = self.bank.count("GET /cob/{txid}")
        self.bank.slow(0.3, duration=5)
        try:
            started = time.monotonic()
            self.assertEqual(self.client.call("GET", "/cob/" + TXID)[0], 404)
            self.assertGreaterEqual(time.monotonic() - started, 0.3)
        finally:
            self.bank.slow(0)
        self.assertEqual(self.bank.count("GET /cob/{txid}"), before + 1)
        self.assertEqual(self.bank.calls["GET /cob/{txid}"], before + 1)
        last = self.bank.log[-1]
        self.assertEqual((last.method, last.endpoint, last.status, last.client),
                         ("GET", "GET /cob/{txid}", 404, "pixrelay merchant"))


if __name__ == "__main__":
    unittest.main(verbosity=2)
