"""The bank tests' kit checks itself: bcb.py (the API Pix 2.9.0 validator,
its errata) against the spec's own examples, and certs.py's certificates
with `openssl verify` and a real TLS handshake. No pixrelay, no Redis."""
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import unittest

import bcb
import certs

VENDOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vendor", "bcb-pix-api")

# The operations the bank tests stand for (README of the reference): their
# request and response bodies and the examples the spec gives for them.
BANK_OPERATIONS = [
    ("put", "/webhook/{chave}"), ("get", "/webhook/{chave}"), ("delete", "/webhook/{chave}"),
    ("get", "/webhook"), ("get", "/pix"), ("get", "/pix/{e2eid}"),
    ("put", "/pix/{e2eid}/devolucao/{id}"), ("get", "/pix/{e2eid}/devolucao/{id}"),
    ("put", "/cob/{txid}"), ("post", "/cob"), ("get", "/cob/{txid}"), ("patch", "/cob/{txid}"),
    ("get", "/{pixUrlAccessToken}"),
]


def documented_examples():
    """[(where, schema name, example name)] for every body of BANK_OPERATIONS
    whose schema is a components.schemas $ref and that names examples."""
    spec = bcb.raw_spec()
    deref = lambda o: bcb._pointer(spec, o["$ref"][1:]) if "$ref" in o else o  # noqa: E731
    out = []
    for method, path in BANK_OPERATIONS:
        op = spec["paths"][path][method]
        bodies = [("body", deref(op["requestBody"]))] if "requestBody" in op else []
        bodies += [(status, deref(r)) for status, r in op["responses"].items()]
        for what, body in bodies:
            for media in (body.get("content") or {}).values():
                ref = media.get("schema", {}).get("$ref", "")
                for ex in (media.get("examples") or {}).values():
                    out.append(("%s %s %s" % (method.upper(), path, what),
                                ref.rsplit("/", 1)[-1], ex["$ref"].rsplit("/", 1)[-1]))
    return out


def pix(**changes):
    p = bcb.example("pixWebhook2")
    p.update(changes)
    return {k: v for k, v in p.items() if v is not None}


class Vendored(unittest.TestCase):
    def test_vendored_spec_license_and_notice(self):
        spec = bcb.raw_spec()
        self.assertEqual(spec["info"]["version"], "2.9.0")
        self.assertEqual(spec["info"]["license"]["name"], "Apache 2.0")
        with open(os.path.join(VENDOR, "LICENSE")) as f:
            self.assertIn("Apache License\n                           Version 2.0", f.read())
        with open(os.path.join(VENDOR, "README.md")) as f:
            notice = f.read()
        for word in ("Banco Central do Brasil", "bacen/pix-api", "openapi.yaml", "2.9.0",
                     "Apache", "only by the test"):
            self.assertIn(word, notice)

    def test_errata_still_find_their_faults(self):
        bcb.check_errata()
        self.assertEqual(len(bcb.ERRATA), len({what for what, _ in bcb.ERRATA}))
        for what, why in bcb.ERRATA:
            self.assertTrue(what and why)

    def test_every_schema_converts(self):
        for name in bcb.raw_spec()["components"]["schemas"]:
            self.assertIsInstance(bcb.schema(name), dict, name)
        with self.assertRaisesRegex(KeyError, "no components.schemas.Nope"):
            bcb.validate("Nope", {})


class Webhook(unittest.TestCase):
    def test_pix_webhook2_as_is(self):
        bcb.validate("Pix", bcb.example("pixWebhook2"))
        bcb.validate_webhook_body({"pix": [bcb.example("pixWebhook2")]})

    def test_pix_webhook1_fails_as_is_naming_devolucoes(self):
        self.assertIsInstance(bcb.example("pixWebhook1")["devolucoes"], dict)
        with self.assertRaises(bcb.SpecViolation) as cm:
            bcb.validate_webhook_body({"pix": [bcb.example("pixWebhook1")]})
        self.assertEqual([p for p, _ in cm.exception.errors], ["$.pix[0].devolucoes"])
        self.assertIn("is not of type 'array'", str(cm.exception))

    def test_pix_webhook1_fixed(self):
        fixed = bcb.example_fixed("pixWebhook1")
        self.assertEqual(fixed["devolucoes"], [bcb.example("pixWebhook1")["devolucoes"]])
        bcb.validate_webhook_body({"pix": [fixed, bcb.example_fixed("pixWebhook2")]})

    def test_examples_are_copies(self):
        bcb.example("pixWebhook1")["devolucoes"] = None
        self.assertIsInstance(bcb.example("pixWebhook1")["devolucoes"], dict)

    def test_raw_bytes_and_not_json(self):
        body = json.dumps({"pix": [pix()]}).encode()
        self.assertEqual(bcb.validate_webhook_body(body), {"pix": [pix()]})
        with self.assertRaisesRegex(bcb.SpecViolation, r"WebhookPixBody does not validate: \$: not JSON"):
            bcb.validate_webhook_body(b'{"pix": [')

    def test_every_fault_with_its_path(self):
        with self.assertRaises(bcb.SpecViolation) as cm:
            bcb.validate_webhook_body({"pix": [pix(horario="2020-02-30T10:00:00Z"), pix(infoPagador=5)]})
        self.assertEqual(cm.exception.errors, [
            ("$.pix[0].horario", "'2020-02-30T10:00:00Z' is not a 'date-time'"),
            ("$.pix[1].infoPagador", "5 is not of type 'string'")])
        self.assertTrue(str(cm.exception).startswith("WebhookPixBody does not validate (2 errors):\n"))


class PixSchema(unittest.TestCase):
    def assert_fails(self, instance, path, reason_re, schema="Pix"):
        with self.assertRaises(bcb.SpecViolation) as cm:
            bcb.validate(schema, instance)
        self.assertIsInstance(cm.exception, AssertionError)
        self.assertEqual(len(cm.exception.errors), 1, str(cm.exception))
        self.assertEqual(cm.exception.errors[0][0], path)
        self.assertRegex(cm.exception.errors[0][1], reason_re)
        return cm.exception

    def test_valor_without_cents_fails(self):
        e = self.assert_fails(pix(valor="110"), "$.valor", r"^'110' does not match ")
        self.assertEqual(str(e), "Pix does not validate: $.valor: '110' does not match "
                                 "'\\\\d{1,10}\\\\.\\\\d{2}'")

    def test_without_end_to_end_id_fails(self):
        self.assert_fails(pix(endToEndId=None), "$", r"'endToEndId' is a required property")

    def test_txid_of_25_passes_erratum_a(self):
        bcb.validate("Pix", pix(txid="a" * 25))
        bcb.validate("Pix", pix(txid="A1"))
        self.assert_fails(pix(txid=""), "$.txid", "does not match")
        # the spec as written: TxId's 26-35 alone refuses the static BR Code's txid
        self.assertIn({"$ref": "#/components/schemas/TxId"},
                      bcb.raw_spec()["components"]["schemas"]["Pix"]["properties"]["txid"]["allOf"])

    def test_txid_of_a_charge_stays_26_to_35(self):
        cob = bcb.example_fixed("cobResponse2")
        cob["pix"][0]["txid"] = "a" * 25
        self.assert_fails(cob, "$.pix[0].txid", "does not match", schema="CobCompleta")

    def test_patterns_stay_unanchored_as_the_spec_writes_them(self):
        # JSON Schema searches a pattern anywhere; the kit does not anchor
        # \d{1,10}\.\d{2} behind the spec's back
        bcb.validate("Pix", pix(valor="R$ 110.00!"))

    def test_patterns_are_ecma_262(self):
        self.assert_fails(pix(valor="\u0661\u0661\u0660.\u0660\u0660"), "$.valor", "does not match")
        bcb.validate("PessoaJuridica", {"cnpj": "12345678000195", "nome": "x"})
        self.assert_fails({"cnpj": "12345678000195\n", "nome": "x"}, "$.cnpj", "does not match",
                          schema="PessoaJuridica")

    def test_devolucao(self):
        d = bcb.example("devolucaoResponse1")
        bcb.validate("Devolucao", d)
        self.assert_fails(dict(d, status="PAGO"), "$.status", "is not one of", schema="Devolucao")

    def test_pix_consultados_requires_pix_erratum_b(self):
        value = bcb.example_fixed("getPix1")
        bcb.validate("PixConsultados", value)
        del value["pix"]
        self.assert_fails(value, "$", "'pix' is a required property", schema="PixConsultados")

    def test_one_of_names_each_branch(self):
        cob = bcb.example("cobBody2")
        cob["devedor"] = {"nome": "Fulano", "cpf": "123"}
        self.assert_fails(cob, "$.devedor", r"^matches none of the 2 branches of oneOf: "
                                            r"\[0\] \$\.devedor\.cpf: '123' does not match .*; "
                                            r"\[1\] \$\.devedor: 'cnpj' is a required property",
                          schema="CobSolicitada")


class SpecExamples(unittest.TestCase):
    def test_examples_of_the_bank_operations_validate(self):
        found = documented_examples()
        schemas = {s for _, s, _ in found}
        for name in ("Pix", "Devolucao", "DevolucaoSolicitada", "CobSolicitada", "CobRevisada",
                     "CobGerada", "CobCompleta", "CobPayload", "PixConsultados", "Problema",
                     "WebhookSolicitado", "WebhookCompleto", "WebhooksConsultados"):
            self.assertIn(name, schemas)
        for where, schema, name in found:
            with self.subTest(where=where, example=name):
                bcb.validate(schema, bcb.example_fixed(name))

    def test_each_example_erratum_is_needed(self):
        by_example = {name: schema for _, schema, name in documented_examples()}
        for name in bcb._EXAMPLE_FIXES:
            with self.subTest(example=name):
                if name.startswith("pixWebhook"):
                    check = lambda v: bcb.validate_webhook_body({"pix": [v]})  # noqa: E731
                else:
                    check = lambda v: bcb.validate(by_example[name], v)  # noqa: E731
                with self.assertRaises(bcb.SpecViolation):
                    check(bcb.example(name))
                check(bcb.example_fixed(name))


class Query(unittest.TestCase):
    WINDOW = {"inicio": "2020-04-01T00:00:00Z", "fim": "2020-04-01T23:59:59Z"}

    def test_cpf_erratum_c(self):
        spec_cpf = [p for p in bcb.raw_spec()["paths"]["/pix"]["get"]["parameters"]
                    if p.get("name") == "cpf"][0]["schema"]["pattern"]
        self.assertEqual(spec_cpf, "/^\\d{11}$/")
        self.assertIsNone(re.search(spec_cpf, "12345678909"))   # as written it matches nothing
        self.assertEqual(bcb.validate_query("/pix", "GET", dict(self.WINDOW, cpf="12345678909")),
                         dict(self.WINDOW, cpf="12345678909"))
        with self.assertRaises(bcb.SpecViolation) as cm:
            bcb.validate_query("/pix", "get", dict(self.WINDOW, cpf="1234567890"))
        self.assertEqual(str(cm.exception), "GET /pix query does not validate: ?cpf: '1234567890' "
                                            "does not match '^\\\\d{11}$'")

    def test_query_string_types_and_faults(self):
        got = bcb.validate_query("/pix", "get", "inicio=2020-04-01T00:00:00Z&fim=2020-04-01T23:59:59Z"
                                 "&txIdPresente=true&paginacao.paginaAtual=2"
                                 "&paginacao.itensPorPagina=1000&txid=abc")
        self.assertEqual(got["txIdPresente"], True)
        self.assertEqual(got["paginacao.itensPorPagina"], 1000)
        with self.assertRaises(bcb.SpecViolation) as cm:
            bcb.validate_query("/pix", "get", {"fim": "yesterday", "txIdPresente": "1",
                                               "paginacao.itensPorPagina": "1001", "page": "2",
                                               "cpf": ["12345678909", "12345678909"]})
        self.assertEqual(cm.exception.errors, [
            ("?cpf", "given 2 times; it is not an array"),
            ("?fim", "'yesterday' is not a 'date-time'"),
            ("?inicio", "required query parameter is missing"),
            ("?page", "not a query parameter of GET /pix"),
            ("?paginacao.itensPorPagina", "1001 is greater than the maximum of 1000"),
            ("?txIdPresente", "'1' is not of type 'boolean'")])
        bcb.validate_query("/pix", "get", dict(self.WINDOW, page="2"), allow_unknown=True)

    def test_concrete_paths_and_unknown_operations(self):
        bcb.validate_query("/pix/E12345678202009091221abcdef12345", "get", {})
        with self.assertRaisesRegex(KeyError, "no operation PATCH /pix"):
            bcb.validate_query("/pix", "patch", {})


def _handshake(ca, server, client, timeout=10):
    """A TLS handshake over a socket pair: the server requires a client
    certificate from `ca`, the client trusts `ca` and checks 127.0.0.1.
    Returns None on success, else the server side's error text."""
    srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    srv_ctx.load_cert_chain(server.cert, server.key)
    srv_ctx.load_verify_locations(ca.cert)
    srv_ctx.verify_mode = ssl.CERT_REQUIRED
    cli_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    cli_ctx.load_verify_locations(ca.cert)
    if client:
        cli_ctx.load_cert_chain(client.cert, client.key)
    a, b = socket.socketpair()
    a.settimeout(timeout)
    b.settimeout(timeout)
    result = {}

    def serve():
        try:
            with srv_ctx.wrap_socket(a, server_side=True) as s:
                s.sendall(s.recv(5))
            result["server"] = None
        except (ssl.SSLError, OSError) as e:
            result["server"] = str(e)

    t = threading.Thread(target=serve)
    t.start()
    try:
        with cli_ctx.wrap_socket(b, server_hostname="127.0.0.1") as s:
            s.sendall(b"hello")
            s.recv(5)
    except (ssl.SSLError, OSError):
        pass
    finally:
        t.join(timeout)
        a.close()
        b.close()
    return result.get("server", "no answer")


class Certificates(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pixrelay-certs-")
        cls.ca = certs.make_ca(cls.dir, "bank-ca", "Test Bank CA")
        cls.server = certs.make_server(cls.dir, cls.ca)
        cls.client = certs.make_client(cls.dir, cls.ca, "bank")
        cls.expired = certs.make_expired_client(cls.dir, cls.ca)
        cls.foreign = certs.make_foreign_client(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def x509(self, cert, *args):
        return subprocess.run([certs.OPENSSL, "x509", "-in", cert, "-noout"] + list(args),
                              capture_output=True, text=True, check=True).stdout

    def test_paths(self):
        self.assertEqual(self.ca, certs.CA("Test Bank CA", os.path.join(self.dir, "bank-ca.pem"),
                                           os.path.join(self.dir, "bank-ca.key")))
        for c in (self.server, self.client, self.expired, self.foreign):
            self.assertTrue(os.path.isfile(c.cert) and os.path.isfile(c.key), c)
            self.assertEqual(os.stat(c.key).st_mode & 0o077, 0, c.key)
        self.assertIn("CA:TRUE", self.x509(self.ca.cert, "-ext", "basicConstraints"))
        self.assertIn("prime256v1", self.x509(self.client.cert, "-text"))

    def test_server_verifies_for_127_0_0_1_and_localhost(self):
        ok, out = certs.openssl_verify(self.ca.cert, self.server.cert, "sslserver")
        self.assertTrue(ok, out)
        self.assertIn("does match certificate", self.x509(self.server.cert, "-checkip", "127.0.0.1"))
        self.assertIn("does match certificate", self.x509(self.server.cert, "-checkhost", "localhost"))
        self.assertIn("does NOT match", self.x509(self.server.cert, "-checkhost", "example.com"))

    def test_client_verifies_as_client_only(self):
        ok, out = certs.openssl_verify(self.ca.cert, self.client.cert, "sslclient")
        self.assertTrue(ok, out)
        self.assertEqual(out, self.client.cert + ": OK")
        self.assertIn("TLS Web Client Authentication",
                      self.x509(self.client.cert, "-ext", "extendedKeyUsage"))
        ok, out = certs.openssl_verify(self.ca.cert, self.client.cert, "sslserver")
        self.assertFalse(ok)
        self.assertIn("unsuitable certificate purpose", out)

    def test_expired_client_fails_as_expired_only(self):
        ok, out = certs.openssl_verify(self.ca.cert, self.expired.cert, "sslclient")
        self.assertFalse(ok)
        self.assertIn("certificate has expired", out)
        self.assertIn("TLS Web Client Authentication",
                      self.x509(self.expired.cert, "-ext", "extendedKeyUsage"))
        # with the clock out of the picture it verifies: only its dates are at fault
        p = subprocess.run([certs.OPENSSL, "verify", "-no_check_time", "-CAfile", self.ca.cert,
                            "-purpose", "sslclient", self.expired.cert], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_other_ca_fails_unable_to_get_issuer(self):
        ok, out = certs.openssl_verify(self.ca.cert, self.foreign.cert, "sslclient")
        self.assertFalse(ok)
        self.assertIn("unable to get local issuer certificate", out)
        ok, out = certs.openssl_verify(os.path.join(self.dir, "foreign-client-ca.pem"),
                                       self.foreign.cert, "sslclient")
        self.assertTrue(ok, out)

    def test_tls_handshake(self):
        self.assertIsNone(_handshake(self.ca, self.server, self.client))
        self.assertIn("certificate has expired", _handshake(self.ca, self.server, self.expired))
        self.assertIn("unable to get local issuer certificate",
                      _handshake(self.ca, self.server, self.foreign))
        self.assertIn("peer did not return a certificate", _handshake(self.ca, self.server, None))


if __name__ == "__main__":
    unittest.main(verbosity=2)
