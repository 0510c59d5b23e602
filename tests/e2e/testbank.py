"""A bank of the tests' own that speaks the Central Bank's API Pix (2.9.0).

Not a stub that says yes: it serves HTTPS on 127.0.0.1 and demands a client
certificate signed by the CA it is given (a call without one fails the TLS
handshake); it issues OAuth2 client-credentials tokens that expire and can
be revoked; every request body, query and path parameter it receives and
every answer it gives is checked against the official schemas with bcb.py,
and a request that fails is answered 400 with a Problema naming each fault
and recorded in bank.violations. It keeps charges (cob), settled Pix and
their refunds, and sends the standard's webhook over mutual TLS.

    bank = TestBank(client_ca=ca.cert, receiver_ca=nginx_ca.cert).start()
    bank.url, bank.token_url            https://127.0.0.1:PORT/api/v2, .../oauth/token
    bank.server_ca                      the CA a client trusts for the bank's certificate
    bank.client_id, bank.client_secret  OAuth2 credentials (HTTP Basic)
    bank.key                            the merchant account's Pix key (bank.keys: all)
    bank.webhook_ca                     the CA of the certificate the webhook calls present

  API (under bank.url): PUT/GET /cob/{txid}, PUT/GET /cobv/{txid}, GET /pix, GET /pix/{e2eid},
  PUT/GET /pix/{e2eid}/devolucao/{id}, PUT/GET/DELETE /webhook/{chave}; and
  POST /oauth/token (form grant_type=client_credentials[&scope=...]).

  As banks bend the standard:
    bank.require_scope = True     a token request without scope= is refused
                                  (400 invalid_scope)
    bank.app_key = ("query" | "header", NAME, VALUE)
                                  every API call (not the token's) without
                                  that query parameter or header is refused
                                  (403 AcessoNegado), as a bank's gateway
                                  that wants an application key does
    bank.token_requests           each token request: {"scope": the form's
                                  scope or None, "target": its path and
                                  query, "headers": its headers}

  The money side, as the tests drive it:
    pix = bank.pay(txid, valor=None, info=None, when=None)   settle a cob
    pix = bank.pay_key("5.00", chave=None, txid=None, ...)   a Pix to the key itself
    pix = bank.pay_cobv(txid, when=None, valor=None, parts=True)
                              settle a cobv (charge with a due date) with
                              the amount due on when's day (Brasilia) as
                              the bank computes it, with componentesValor
                              unless parts=False; bank.cobv_due(txid, day)
    dev = bank.settle_refund(e2e, id, status="DEVOLVIDO")    EM_PROCESSAMENTO -> ...
    sent = bank.notify([e2e or Pix, ...])     POST {webhookUrl}/pix, {"pix": [...]}
    bank.webhook_faults(drop=0.2, twice=0.1, delay=0.1, delay_seconds=1, seed=7)

  Failure knobs and what happened:
    bank.down(seconds=None, mode="refuse" | "503" | "close"), bank.up()
    bank.forge_cob = "key" | "amount" | "location" | "txid" | "chave" | "valor" | "expiracao" | None
        PUT /cob answers a cob other than the one it made (and keeps): its
        pixCopiaECola with another key in 26.01, or R$ 0,01 in 54, or another
        location than loc.location; or another txid, chave, valor.original or
        calendario.expiracao. The answer still keeps the schema.
    bank.slow(seconds, duration=None)
    bank.history_days = 7     GET /pix refuses an inicio older than that (400:
                              a bank's own limit, not a fault of the caller's)
    bank.token_ttl = 1; bank.revoke_tokens()
    bank.calls["PUT /cob/{txid}"], bank.log, bank.handshake_failures,
    bank.deliveries, bank.violations (== [] when every call kept the standard),
    bank.take_violations()

Where the spec's schema is looser than the standard's rules (an unanchored
txid pattern, a charge for a key of another account, a refund larger than
its Pix), the bank answers 400 as the standard's error catalogue says, and
records it too: kind "rule" rather than "schema". Every 400 the bank gives
is a violation, but the refusal of a range older than history_days (kind
"limit": the standard sets no such limit, yet banks keep their list only so
long); a 404 (a txid it does not know) is an ordinary answer.
"""
import base64
import collections
import datetime
import decimal
import functools
import json
import math
import random
import re
import string
import time
import unicodedata
import urllib.parse
import uuid

import bcb
import certs
from bankhook import WebhookSender
from bankspec import OPERATIONS, Refusal, check_request, check_response, not_found, problem_body
from bankspec import methods, route, rule, spec_operation
from fakeserver import MAX_BODY, FakeServer, parse_time, rfc3339
from fakeserver import utc_now as _now
from fakeserver import same as _same
from testbank_cobr import RecurringChargeOps
from testbank_rec import RecurrenceOps

SCOPES = ("cob.write", "cob.read", "cobv.write", "cobv.read", "pix.write", "pix.read", "webhook.write",
          "webhook.read",
          # Pix Automático (testbank_rec.py)
          "payloadlocationrec.write", "payloadlocationrec.read", "rec.write", "rec.read",
          "webhookrec.write", "webhookrec.read",
          # Pix Automático's recurring charges (testbank_cobr.py)
          "cobr.write", "cobr.read", "webhookcobr.write", "webhookcobr.read")
TOKEN_PATH = "/oauth/token"

_ALNUM = string.ascii_letters + string.digits
_TXID = re.compile(r"[a-zA-Z0-9]{26,35}")
BRASILIA = datetime.timezone(datetime.timedelta(hours=-3))


# ---------------------------------------------------------------------------
# BR Code (EMV merchant-presented QR, the Pix rules of the BCB's manual)

def crc16_ccitt(text):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final
    xor) of an ASCII text, as 4 uppercase hex digits."""
    crc = 0xFFFF
    for b in text.encode("ascii"):
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return "%04X" % crc


def _ascii(text, limit):
    """Accents folded, other non-ASCII dropped, cut to `limit` characters."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return folded[:limit]


def _tlv(tag, value):
    if len(value) > 99:
        raise ValueError("BR Code field %s is %d characters long (at most 99)" % (tag, len(value)))
    return "%s%02d%s" % (tag, len(value), value)


def emv_br_code(valor, name, city, key=None, location=None, reference="***", single_use=True):
    """A BR Code: 01 = 12 (single use) when single_use; field 26 holds the
    GUI br.gov.bcb.pix, the Pix key in 26.01 when given and the location
    URL (without its scheme) in 26.25 when given; the amount valor
    ("10.50") in 54 unless it is zero; 62.05 the reference (its first 25
    characters); the CRC-16 in 63. ValueError when a field does not fit."""
    if location is not None and ("://" in location or len(location) > 77):
        raise ValueError("a BR Code location is a URL without a scheme of at most 77 characters")
    account = (_tlv("00", "br.gov.bcb.pix") + (_tlv("01", key) if key else "")
               + (_tlv("25", location) if location is not None else ""))
    text = (_tlv("00", "01") + (_tlv("01", "12") if single_use else "")
            + _tlv("26", account)
            + _tlv("52", "0000") + _tlv("53", "986")
            + (_tlv("54", valor) if float(valor) > 0 else "")
            + _tlv("58", "BR") + _tlv("59", _ascii(name, 25)) + _tlv("60", _ascii(city, 15))
            + _tlv("62", _tlv("05", reference[:25])) + "6304")
    return text + crc16_ccitt(text)


def br_code_dynamic(location, valor, name, city, key=None):
    """The pixCopiaECola of an immediate charge: a dynamic BR Code, single
    use, the location in 26.25, 62.05 "***". key: a Pix key in 26.01 as
    well (no charge's code has one: a forgery)."""
    return emv_br_code(valor, name, city, key, location)


# ---------------------------------------------------------------------------
# Times and identifiers

def _cents(valor):
    whole, _, frac = valor.partition(".")
    return int(whole) * 100 + int((frac + "00")[:2])


Call = collections.namedtuple("Call", "time method path endpoint status client")
Call.__doc__ = """One request the bank answered (or dropped: status None);
client is the CN of the certificate it came with."""


class TestBank(FakeServer, RecurrenceOps, RecurringChargeOps):
    name = "testbank"
    server_version = "pixrelay-testbank"
    handshake_reasons = True
    bug_where, bug_detail = "bank", "the test bank failed"
    Call = Call

    def __init__(self, client_ca, directory=None, server_cert=None, server_ca=None,
                 webhook_cert=None, webhook_ca=None, receiver_ca=None, keys=None,
                 client_id="pixrelay", client_secret=None, scopes=SCOPES, token_ttl=3600,
                 prefix="/api/v2", ispb="99999999", payer_ispb="12345678",
                 merchant_name="LOJA DE TESTE", merchant_city="SAO PAULO",
                 location_host="qr.testbank.example", seed=None, auto_notify=False,
                 host="127.0.0.1", port=0):
        """A bank not yet listening (start() does). client_ca: the CA file
        whose certificates may call the API. The bank's own certificates
        are made with certs.py in `directory` (a temporary one, removed by
        close(), when None) unless given: server_cert (a certs.Cert) with
        server_ca (the CA file that signed it), webhook_cert with webhook_ca.
        receiver_ca: the CA file trusted for the webhook receiver's server
        certificate (needed by notify). keys: the Pix keys of the merchant's
        account (default: one random key). token_ttl: seconds a token lives
        (a float below 1 is allowed; expires_in says at least 1)."""
        self._init_server(directory, host, port)
        self.client_ca = client_ca
        self.server_cert, self.server_ca = server_cert, server_ca
        self.webhook_cert, self.webhook_ca = webhook_cert, webhook_ca
        self._sender = WebhookSender(webhook_cert, receiver_ca)
        self.keys = list(keys or [str(uuid.UUID(int=random.Random(seed).getrandbits(128), version=4))])
        self.prefix = prefix.rstrip("/")
        self.ispb, self.payer_ispb = ispb, payer_ispb
        self.merchant_name, self.merchant_city = merchant_name, merchant_city
        self.location_host = location_host
        self.token_ttl = token_ttl
        self.auto_notify = auto_notify
        self.history_days = None   # GET /pix answers for any inicio

        self._rng = random.Random(seed)
        self._clients = {}
        self.client_id = client_id
        self.client_secret = client_secret or "".join(self._rng.choice(_ALNUM) for _ in range(32))
        self.add_client(client_id, self.client_secret, scopes)
        self._tokens = {}
        self.tokens_issued = 0

        self._cobs = {}            # txid -> cob record (see _cob_view)
        self._cobvs = {}           # txid -> cobv record (see _cobv_view)
        self._next_loc = 1
        self._pix = {}             # e2eid -> Pix (devolucoes kept in it)
        self._pix_meta = {}        # e2eid -> {"pagador": {...}, "horario": datetime}
        self._garbled = {}         # e2eid -> fields shown instead (garble)
        self._webhooks = {}        # chave -> {"webhookUrl", "chave", "criacao"}
        self._rec_init()           # Pix Automático (testbank_rec.py)
        self._cobr_init()          # its recurring charges (testbank_cobr.py)

        self.forge_cob = None
        self.require_scope = False
        self.app_key = None
        self.token_requests = []

    # ---- life cycle ----

    def start(self):
        """Make the certificates it lacks, listen, serve. Returns self."""
        if self.server_cert is None:
            ca = certs.make_ca(self.directory, "testbank-server-ca", "Test Bank Server CA")
            self.server_cert, self.server_ca = certs.make_server(self.directory, ca, "testbank-server"), ca.cert
        if self.webhook_cert is None:
            ca = certs.make_ca(self.directory, "testbank-webhook-ca", "Test Bank Webhook CA")
            self.webhook_cert = certs.make_client(self.directory, ca, "testbank-webhook", "testbank webhook")
            self.webhook_ca = ca.cert
        self._sender.cert = self.webhook_cert
        self._serve_tls(self.server_cert, self.client_ca)
        return self

    @property
    def token_url(self):
        return self.origin + TOKEN_PATH

    @property
    def key(self):
        return self.keys[0]

    # ---- clients and tokens ----

    def add_client(self, client_id, secret, scopes=SCOPES):
        """Credentials that may ask for tokens, with the scopes they may have."""
        with self._lock:
            self._clients[client_id] = (secret, frozenset(scopes))

    def revoke_tokens(self):
        """Every token issued so far stops working at once."""
        with self._lock:
            self._tokens.clear()

    # ---- knobs (down, up, slow, webhook_faults: fakeserver.py's) ----

    def count(self, endpoint=None):
        """Calls so far to an endpoint ("GET /pix"), or to all."""
        with self._lock:
            return sum(self.calls.values()) if endpoint is None else self.calls[endpoint]

    # ---- serving (the request loop is fakeserver.py's) ----

    def _dispatch(self, h, method, path, query, body, found, endpoint):
        if path == TOKEN_PATH:
            return self._token(h, method, body)
        return self._api(h, method, path, query, body, endpoint)

    def _answer_early(self, h, early):
        return self._send(h, early.status, problem_body(early), problem=True)

    def _answer_bug(self, h, e):
        r = Refusal(500, "ErroInternoDoServidor", "Erro interno do servidor", repr(e))
        return self._send(h, 500, problem_body(r), problem=True)

    def _call_extra(self, h):
        """The call's client: the CN of its certificate."""
        return (self._peer_cn(h.connection),)

    @staticmethod
    def _peer_cn(conn):
        try:
            cert = conn.getpeercert()
        except (AttributeError, ValueError):
            return None
        for rdn in (cert or {}).get("subject", ()):
            for k, v in rdn:
                if k == "commonName":
                    return v
        return None

    def _resolve(self, method, path):
        if path == TOKEN_PATH:
            return None, "%s %s" % (method, TOKEN_PATH)
        route = self._route(path)
        return None, "%s %s" % (method, route[0] if route else path)

    def _route(self, path):
        if not path.startswith(self.prefix + "/"):
            return None
        return route(path[len(self.prefix):])

    def _read_body(self, h):
        """(body, None), or (None, Refusal 413) past MAX_BODY; a chunked
        body is read."""
        try:
            return self._read_chunks(h), None
        except Refusal as r:
            return None, r

    def _read_chunks(self, h):
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += h.rfile.read(size)
                h.rfile.readline()
                if len(data) > MAX_BODY:
                    h.close_connection = True
                    raise Refusal(413, "RequisicaoInvalida", "Requisição muito grande.",
                                  "the body is over %d bytes" % MAX_BODY)
        n = int(h.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            h.close_connection = True
            raise Refusal(413, "RequisicaoInvalida", "Requisição muito grande.",
                          "the body is over %d bytes" % MAX_BODY)
        return h.rfile.read(n) if n > 0 else b""

    def _send(self, h, status, body, headers=None, problem=False):
        """Answer; body is a JSON value, bytes, or None (no body). A
        Problema is checked against its schema first (a fault is recorded)."""
        if problem:
            try:
                bcb.validate("Problema", body)
            except bcb.SpecViolation as e:
                self._violation("response", "schema", "%s %s" % (h.command, h.path), h.path, status,
                                e.errors, "the test bank's own Problema")
        return super()._send(h, status, body, headers, "application/problem+json" if problem else None)

    def _answer_unavailable(self, h, path):
        with self._lock:
            left = self._down_until - time.monotonic() if self._down_until is not None else 1
        retry = {"Retry-After": str(max(1, math.ceil(left))) if left != math.inf else "60"}
        if path == TOKEN_PATH:
            return self._send(h, 503, {"error": "temporarily_unavailable"}, retry)
        problem = Refusal(503, "ServicoIndisponivel", "Serviço Indisponível",
                          "Serviço não está disponível no momento.")
        return self._send(h, 503, problem_body(problem), retry, problem=True)

    # ---- OAuth2 token endpoint (RFC 6749 4.4, client_secret_basic) ----

    def _token(self, h, method, body):
        def fail(status, error, description, headers=None):
            if status == 400:   # a request RFC 6749 refuses: as much a violation as the API's
                self._violation("request", "rule", "POST " + TOKEN_PATH, h.path, 400,
                                [("$", "%s: %s" % (error, description))], description)
            return self._send(h, status, {"error": error, "error_description": description}, headers)

        if method != "POST":
            return self._send(h, 405, {"error": "invalid_request", "error_description": "POST only"},
                              {"Allow": "POST"})
        ctype = h.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype != "application/x-www-form-urlencoded":
            return fail(400, "invalid_request", "the body must be application/x-www-form-urlencoded")
        try:
            form = urllib.parse.parse_qs(body.decode("ascii"), keep_blank_values=True, strict_parsing=True)
        except (UnicodeDecodeError, ValueError):
            return fail(400, "invalid_request", "the body is not a form")
        if any(len(v) > 1 for v in form.values()):
            return fail(400, "invalid_request", "a parameter is repeated")
        form = {k: v[0] for k, v in form.items()}
        challenge = {"WWW-Authenticate": 'Basic realm="testbank"'}
        auth = h.headers.get("Authorization", "")
        if not auth.lower().startswith("basic "):
            return fail(401, "invalid_client", "HTTP Basic authentication of the client is required",
                        challenge)
        try:
            raw_id, _, raw_secret = base64.b64decode(auth[6:].strip(), validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return fail(401, "invalid_client", "malformed Basic credentials", challenge)
        # RFC 6749 2.3.1 form-encodes both before Basic; many clients do not
        cid, secret = urllib.parse.unquote_plus(raw_id), urllib.parse.unquote_plus(raw_secret)
        with self._lock:
            known = self._clients.get(cid) or self._clients.get(raw_id)
        if known is None or not (_same(known[0], secret) or _same(known[0], raw_secret)):
            return fail(401, "invalid_client", "unknown client or wrong secret", challenge)
        with self._lock:
            self.token_requests.append({"scope": form.get("scope"), "target": h.path,
                                        "headers": dict(h.headers)})
        if "grant_type" not in form:
            return fail(400, "invalid_request", "grant_type is missing")
        if form["grant_type"] != "client_credentials":
            return fail(400, "unsupported_grant_type", "only client_credentials")
        allowed = known[1]
        if self.require_scope and not form.get("scope", "").strip():
            return fail(400, "invalid_scope", "this bank wants the scopes asked for")
        asked = set(form["scope"].split()) if form.get("scope", "").strip() else set(allowed)
        if not asked <= allowed:
            return fail(400, "invalid_scope", "not granted to this client: " + " ".join(sorted(asked - allowed)))
        with self._lock:
            token = "".join(self._rng.choice(_ALNUM) for _ in range(40))
            ttl = self.token_ttl
            self._tokens[token] = (cid, frozenset(asked), time.monotonic() + ttl)
            self.tokens_issued += 1
        return self._send(h, 200, {"access_token": token, "token_type": "Bearer",
                                   "expires_in": max(1, math.ceil(ttl)), "scope": " ".join(sorted(asked))},
                          {"Cache-Control": "no-store", "Pragma": "no-cache"})

    def _authorize(self, h, op):
        """The bearer token's client, or Refusal 401/403."""
        auth = h.headers.get("Authorization", "")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        if not token:
            detail = "Authorization: Bearer <token> is missing"
        else:
            with self._lock:
                entry = self._tokens.get(token)
            if entry is None:
                detail = "the token is unknown or was revoked"
            elif time.monotonic() >= entry[2]:
                detail = "the token expired"
            else:
                need = {s for req in op.get("security") or [] for s in req.get("OAuth2", [])}
                if not need <= entry[1]:
                    raise Refusal(403, "AcessoNegado", "Acesso Negado",
                                  "the token lacks the scope " + " ".join(sorted(need - entry[1])))
                return entry[0]
        raise Refusal(401, "AcessoNegado", "Acesso Negado", detail, headers={
            "WWW-Authenticate": 'Bearer realm="testbank", error="invalid_token"' if token
            else 'Bearer realm="testbank"'})

    # ---- the API ----

    def _api(self, h, method, path, query, body, endpoint):
        found = self._route(path)
        if found is None:
            r = Refusal(404, "NaoEncontrado", "Não Encontrado", "no such resource: " + path)
            return self._send(h, 404, problem_body(r), problem=True)
        template, params = found
        if (method, template) not in OPERATIONS:
            r = Refusal(405, "RequisicaoInvalida", "Método não permitido", "%s is not allowed here" % method)
            return self._send(h, 405, problem_body(r), {"Allow": ", ".join(methods(template))}, problem=True)
        op = OPERATIONS[(method, template)]
        headers = {}
        if self.app_key is not None:
            # the gateway before the API: its application key, then the
            # request as the spec has it (without that parameter)
            where, name, value = self.app_key
            if where == "query":
                q = urllib.parse.parse_qs(query, keep_blank_values=True)
                got = q.pop(name, [])
                got = got[0] if len(got) == 1 else None
                query = urllib.parse.urlencode(q, doseq=True)
            else:
                got = h.headers.get(name)
            if got is None or not _same(got, value):
                r = Refusal(403, "AcessoNegado", "Acesso Negado",
                            "the application key (%s %s) is missing or wrong" % (where, name))
                return self._send(h, 403, problem_body(r, op.prefix), problem=True)
        try:
            self._authorize(h, spec_operation(method, template))
            values, obj = check_request(method, template, params, query, h.headers.get("Content-Type"), body)
            status, answer = getattr(self, "_op_" + op.handler)(params, values, obj)
        except Refusal as r:
            status, answer, headers = r.status, problem_body(r, op.prefix), r.headers
            if r.status == 400 and r.kind != "limit":
                self._violation("request", r.kind, endpoint, h.path, 400, r.errors, r.detail)
        errors = [] if isinstance(answer, _Garbled) else check_response(method, template, status, answer)
        if errors:
            # the bank's own answer broke the spec: recorded, and a 500, so no test passes on it
            self._violation("response", "schema", endpoint, h.path, status, errors, "the test bank's own answer")
            r = Refusal(500, "ErroInternoDoServidor", "Erro interno do servidor",
                        "the test bank's answer broke the spec: " + "; ".join("%s: %s" % e for e in errors))
            status, answer = 500, problem_body(r)
        return self._send(h, status, answer, headers, problem=status >= 400)

    # ---- operations: (params, query values, body) -> (status, answer) ----

    def _op_put_cob(self, params, values, body):
        txid = params["txid"]
        refuse = functools.partial(rule, "PUT", "/cob/{txid}")
        if not _TXID.fullmatch(txid):
            raise refuse("O campo txid deve ter de 26 a 35 caracteres alfanuméricos.", "{txid}")
        expiracao = body["calendario"].get("expiracao", 86400)
        if expiracao <= 0:
            raise refuse("O campo cob.calendario.expiracao é igual ou menor que zero.", "$.calendario.expiracao")
        original = body["valor"]["original"]
        if not re.fullmatch(r"\d{1,10}\.\d{2}", original):
            raise refuse("O campo cob.valor.original não respeita o _schema_.", "$.valor.original")
        if _cents(original) == 0 and not body["valor"].get("modalidadeAlteracao"):
            raise refuse("O campo cob.valor.original é zero.", "$.valor.original")
        if body["chave"] not in self.keys:
            raise refuse("O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.",
                         "$.chave")
        if "loc" in body:
            raise refuse("O location referenciado por loc.id inexiste.", "$.loc.id")
        asked = {k: body[k] for k in ("valor", "chave", "devedor", "solicitacaoPagador", "infoAdicionais")
                 if k in body}
        asked["calendario"] = {"expiracao": expiracao}
        with self._lock:
            cob = self._cobs.get(txid)
            if cob is None:
                now = _now()
                loc_id, self._next_loc = self._next_loc, self._next_loc + 1
                location = "%s/qr/v2/cob/%s" % (self.location_host, uuid.UUID(
                    int=self._rng.getrandbits(128), version=4).hex)
                cob = {"txid": txid, "criacao": now, "status": "ATIVA", "revisao": 0, "asked": asked,
                       "loc": {"id": loc_id, "location": location, "tipoCob": "cob", "criacao": rfc3339(now)},
                       "pix": [], "revisions": []}
                self._cobs[txid] = cob
            elif asked != cob["asked"]:
                if cob["status"] != "ATIVA":
                    raise refuse("A cobrança já existe, não está no status ATIVA, e a presente requisição "
                                 "busca alterá-la.")
                cob["revisions"].append(self._cob_view(cob, with_pix=False))
                cob["asked"] = asked
                cob["revisao"] += 1
            return 201, self._forged(self._cob_view(cob, with_pix=False))

    # ---- charges with a due date (cobv) ----

    RECEBEDOR = {"cnpj": "11222333000181", "logradouro": "Rua do Teste, 100", "uf": "SP", "cep": "01001000"}

    def _op_put_cobv(self, params, values, body):
        """PUT /cobv/{txid}: the standard's rules beyond the schema (the
        catalogue of CobVOperacaoInvalida), then the cobv kept: a location of
        tipoCob cobv and a dynamic code without an amount (54), the amount
        due depending on the day paid."""
        txid = params["txid"]
        refuse = functools.partial(rule, "PUT", "/cobv/{txid}")
        if not _TXID.fullmatch(txid):
            raise refuse("O campo txid deve ter de 26 a 35 caracteres alfanuméricos.", "{txid}")
        cal, valor = body["calendario"], body["valor"]
        today = _now().astimezone(BRASILIA).date()
        due = datetime.date.fromisoformat(cal["dataDeVencimento"])
        if due < today:
            raise refuse("O campo cobv.calendario.dataDeVencimento é anterior à data de criação da cobrança.",
                         "$.calendario.dataDeVencimento")
        if cal.get("validadeAposVencimento", 30) < 0:
            raise refuse("O campo cobv.calendario.validadeAposVencimento é menor do que zero.",
                         "$.calendario.validadeAposVencimento")
        original = valor["original"]
        if not re.fullmatch(r"\d{1,10}\.\d{2}", original):
            raise refuse("O campo cobv.valor.original não respeita o _schema_.", "$.valor.original")
        if _cents(original) == 0:
            raise refuse("O campo cobv.valor.original apresenta o valor zero.", "$.valor.original")
        for name in ("multa", "juros", "abatimento"):
            if name in valor and not re.fullmatch(r"\d{1,10}\.\d{2}", valor[name]["valorPerc"]):
                raise refuse("O objeto cobv.valor.%s não respeita o _schema_." % name, "$.valor." + name)
        desconto = valor.get("desconto")
        if desconto is not None:
            fixed = desconto.get("descontoDataFixa")
            if desconto["modalidade"] in (1, 2) and not fixed:
                raise refuse("O objeto cobv.valor.desconto apresenta modalidade no valor 1 ou 2, porém o array "
                             "cobv.valor.desconto.descontoDataFixa está vazio ou nulo.", "$.valor.desconto")
            for item in fixed or []:
                if datetime.date.fromisoformat(item["data"]) > due:
                    raise refuse("O objeto cobv.valor.desconto apresenta algum elemento cuja data seja posterior "
                                 "à data de vencimento representada por calendario.dataDeVencimento.",
                                 "$.valor.desconto")
                limit = 10000 if desconto["modalidade"] == 2 else _cents(original)
                if _cents(item["valorPerc"]) >= limit:
                    raise refuse("O objeto cobv.valor.desconto apresenta algum elemento de desconto que "
                                 "representa um valor maior ou igual ao valor da cobrança original ou maior "
                                 "ou igual a 100%.", "$.valor.desconto")
        if body["chave"] not in self.keys:
            raise refuse("O campo cobv.chave corresponde a uma conta que não pertence a este usuário recebedor.",
                         "$.chave")
        if "loc" in body:
            raise refuse("O location referenciado por cobv.loc.id inexiste.", "$.loc.id")
        asked = {k: _copy(body[k]) for k in ("valor", "chave", "devedor", "solicitacaoPagador", "infoAdicionais")
                 if k in body}
        asked["calendario"] = {"dataDeVencimento": cal["dataDeVencimento"],
                               "validadeAposVencimento": cal.get("validadeAposVencimento", 30)}
        with self._lock:
            cobv = self._cobvs.get(txid)
            if cobv is None:
                now = _now()
                loc_id, self._next_loc = self._next_loc, self._next_loc + 1
                location = "%s/qr/v2/cobv/%s" % (self.location_host, uuid.UUID(
                    int=self._rng.getrandbits(128), version=4).hex)
                cobv = {"txid": txid, "criacao": now, "status": "ATIVA", "revisao": 0, "asked": asked,
                        "loc": {"id": loc_id, "location": location, "tipoCob": "cobv", "criacao": rfc3339(now)},
                        "pix": []}
                self._cobvs[txid] = cobv
            elif asked != cobv["asked"]:
                if cobv["status"] != "ATIVA":
                    raise refuse("A cobrança já existe, não está ATIVA, e a presente requisição busca alterá-la")
                cobv["asked"] = asked
                cobv["revisao"] += 1
            return 201, self._cobv_view(cobv, with_pix=False)

    def _op_get_cobv(self, params, values, body):
        with self._lock:
            cobv = self._cobvs.get(params["txid"])
            if cobv is None:
                raise not_found("GET", "/cobv/{txid}", "Cobrança não encontrada para o txid informado.")
            return 200, self._cobv_view(cobv)

    def _cobv_view(self, cobv, with_pix=True):
        asked = cobv["asked"]
        cal = dict(asked["calendario"], criacao=rfc3339(cobv["criacao"]))
        out = {"calendario": cal, "txid": cobv["txid"], "revisao": cobv["revisao"], "loc": dict(cobv["loc"]),
               "location": cobv["loc"]["location"], "status": cobv["status"],
               "recebedor": dict(self.RECEBEDOR, nome=self.merchant_name, cidade=self.merchant_city)}
        for k in ("devedor", "valor", "chave", "solicitacaoPagador", "infoAdicionais"):
            if k in asked:
                out[k] = _copy(asked[k])
        out["pixCopiaECola"] = br_code_dynamic(cobv["loc"]["location"], "0.00", self.merchant_name,
                                               self.merchant_city)
        if with_pix and cobv["pix"]:
            out["pix"] = [self._pix_view(e2e) for e2e in cobv["pix"]]
        return out

    def cobv(self, txid):
        """The cobv as GET /cobv/{txid} shows it (None if unknown)."""
        with self._lock:
            return self._cobv_view(self._cobvs[txid]) if txid in self._cobvs else None

    def cobv_due(self, txid, day):
        """What the payer owes on `day` (a date) for cobv `txid`, as the bank
        computes it from the standard's modalidades (calendar days; each
        part rounded half up to a cent): {"original", "multa", "juros",
        "abatimento", "desconto", "valor"} as Decimal; None after the last
        payable day. No holiday calendar: a due date is never moved."""
        with self._lock:
            asked = _copy(self._cobvs[txid]["asked"])
        cent = decimal.Decimal("0.01")
        valor, cal = asked["valor"], asked["calendario"]
        due = datetime.date.fromisoformat(cal["dataDeVencimento"])
        late = (day - due).days
        if late > cal["validadeAposVencimento"]:
            return None
        o = decimal.Decimal(valor["original"])
        out = {"original": o, "multa": decimal.Decimal(0), "juros": decimal.Decimal(0),
               "abatimento": decimal.Decimal(0), "desconto": decimal.Decimal(0)}
        if late > 0 and "multa" in valor:
            x = decimal.Decimal(valor["multa"]["valorPerc"])
            out["multa"] = x if valor["multa"]["modalidade"] == 1 else o * x / 100
        if late > 0 and "juros" in valor:
            x, m = decimal.Decimal(valor["juros"]["valorPerc"]), valor["juros"]["modalidade"]
            per_day = {1: x, 2: o * x / 100, 3: o * x / 100 / 30, 4: o * x / 100 / 365}[m]
            out["juros"] = per_day * late
        if "abatimento" in valor:
            x = decimal.Decimal(valor["abatimento"]["valorPerc"])
            out["abatimento"] = x if valor["abatimento"]["modalidade"] == 1 else o * x / 100
        d = valor.get("desconto")
        if d and d["modalidade"] in (1, 2):
            for item in sorted(d["descontoDataFixa"], key=lambda i: i["data"]):
                if day <= datetime.date.fromisoformat(item["data"]):
                    x = decimal.Decimal(item["valorPerc"])
                    out["desconto"] = x if d["modalidade"] == 1 else o * x / 100
                    break
        out = {k: v.quantize(cent, rounding=decimal.ROUND_HALF_UP) for k, v in out.items()}
        out["valor"] = out["original"] + out["multa"] + out["juros"] - out["abatimento"] - out["desconto"]
        return out

    def pay_cobv(self, txid, when=None, valor=None, parts=True, info=None, payer_ispb=None, pagador=None):
        """A payer settles cobv `txid` at `when` (default now): a Pix of the
        amount due on that day in Brasilia (cobv_due), or `valor` (then the
        parts are not adjusted: they no longer add up, as a wrong bank's
        would not), with componentesValor (its non-zero parts) unless
        parts=False. ValueError for an unknown cobv, one not ATIVA or past
        its last payable day. Returns the Pix (a copy)."""
        moment = parse_time(when) if when is not None else _now()
        with self._lock:
            cobv = self._cobvs.get(txid)
            if cobv is None:
                raise ValueError("no cobv with txid %s" % txid)
            if cobv["status"] != "ATIVA":
                raise ValueError("cobv %s is %s" % (txid, cobv["status"]))
            due = self.cobv_due(txid, moment.astimezone(BRASILIA).date())
            if due is None:
                raise ValueError("cobv %s is past its last payable day" % txid)
            comp = {k: {"valor": str(v)} for k, v in due.items() if k != "valor" and (v or k == "original")}
            pix = self._settle(cobv["asked"]["chave"], valor or str(due["valor"]), txid, info, moment,
                               payer_ispb, pagador, componentes=comp if parts else None)
            cobv["pix"].append(pix["endToEndId"])
            cobv["status"] = "CONCLUIDA"
        if self.auto_notify:
            self.notify([pix["endToEndId"]], wait=False)
        return _copy(pix)

    def _forged(self, view):
        """The cob as forge_cob alters it in PUT /cob's answer."""
        kind = self.forge_cob
        location = view["loc"]["location"]
        if kind is None:
            return view
        if kind in ("key", "amount", "location"):
            valor = "0.01" if kind == "amount" else view["valor"]["original"]
            key = "outra-chave@fraude.example" if kind == "key" else None
            if kind == "key":
                location = location[:99 - 18 - 4 - len(key) - 4]  # field 26 holds 99 characters
            if kind == "location":
                location = "qr.fraude.example/qr/v2/" + location.rsplit("/", 1)[1]
            view["pixCopiaECola"] = br_code_dynamic(location, valor, self.merchant_name, self.merchant_city,
                                                    key=key)
            if kind == "key":
                view["loc"]["location"] = view["location"] = location
        elif kind == "txid":
            view["txid"] = view["txid"][:-1] + ("A" if view["txid"][-1] != "A" else "B")
        elif kind == "chave":
            view["chave"] = "outra-chave@fraude.example"
        elif kind == "valor":
            view["valor"] = {"original": "0.01"}
        elif kind == "expiracao":
            view["calendario"]["expiracao"] = 60
        else:
            raise ValueError("forge_cob: no such forgery %r" % kind)
        return view

    def _op_get_cob(self, params, values, body):
        with self._lock:
            cob = self._cobs.get(params["txid"])
            if cob is None:
                raise not_found("GET", "/cob/{txid}", "Cobrança não encontrada para o txid informado.")
            revisao = values.get("revisao", cob["revisao"])
            if revisao == cob["revisao"]:
                return 200, self._cob_view(cob)
            if 0 <= revisao < len(cob["revisions"]):
                return 200, cob["revisions"][revisao]
            raise rule("GET", "/cob/{txid}", "o parâmetro revisao corresponde a uma revisão inexistente "
                       "para a cobrança apontada pelo parâmetro txid.", "?revisao")

    def _cob_view(self, cob, with_pix=True):
        asked = cob["asked"]
        out = {"calendario": {"criacao": rfc3339(cob["criacao"]), "expiracao": asked["calendario"]["expiracao"]},
               "txid": cob["txid"], "revisao": cob["revisao"], "loc": dict(cob["loc"]),
               "location": cob["loc"]["location"], "status": cob["status"]}
        for k in ("devedor", "valor", "chave", "solicitacaoPagador", "infoAdicionais"):
            if k in asked:
                out[k] = _copy(asked[k])
        out["pixCopiaECola"] = br_code_dynamic(cob["loc"]["location"], asked["valor"]["original"],
                                               self.merchant_name, self.merchant_city)
        if with_pix and cob["pix"]:
            out["pix"] = [self._pix_view(e2e) for e2e in cob["pix"]]
        return out

    def _op_get_pix_list(self, params, values, body):
        refuse = functools.partial(rule, "GET", "/pix")
        try:
            inicio, fim = parse_time(values["inicio"]), parse_time(values["fim"])
        except ValueError as e:
            raise refuse("inicio/fim: %s" % e, "?inicio")
        if fim < inicio:
            raise refuse("o timestamp representado pelo parâmetro fim é anterior ao timestamp representado "
                         "pelo parâmetro inicio.", "?fim")
        days = self.history_days
        if days is not None and inicio < _now() - datetime.timedelta(days=days):
            r = refuse("o parâmetro inicio é anterior ao período de consulta disponível (%d dias)." % days,
                       "?inicio")
            r.kind = "limit"
            raise r
        if "cpf" in values and "cnpj" in values:
            raise refuse("ambos os parâmetros cpf e cnpj estão preenchidos.", "?cnpj")
        page = values.get("paginacao.paginaAtual", 0)
        per = values.get("paginacao.itensPorPagina", 100)
        if page < 0 or per < 1:
            raise refuse("paginacao.paginaAtual ou paginacao.itensPorPagina é negativo.", "?paginacao.paginaAtual")
        with self._lock:
            found = []
            for e2e, pix in self._pix.items():
                meta = self._pix_meta[e2e]
                if not inicio <= meta["horario"] <= fim:
                    continue
                if "txid" in values and pix.get("txid") != values["txid"]:
                    continue
                if "txIdPresente" in values and ("txid" in pix) != values["txIdPresente"]:
                    continue
                if "devolucaoPresente" in values and bool(pix.get("devolucoes")) != values["devolucaoPresente"]:
                    continue
                if any(k in values and meta["pagador"].get(k) != values[k] for k in ("cpf", "cnpj")):
                    continue
                found.append((meta["horario"], e2e))
            found.sort()
            items = [self._pix_view(e2e) for _, e2e in found[page * per:(page + 1) * per]]
        parametros = {"inicio": values["inicio"], "fim": values["fim"]}
        for k in ("txid", "txIdPresente", "devolucaoPresente", "cpf", "cnpj"):
            if k in values:
                parametros[k] = values[k]
        parametros["paginacao"] = {"paginaAtual": page, "itensPorPagina": per,
                                   "quantidadeDePaginas": max(1, math.ceil(len(found) / per)),
                                   "quantidadeTotalDeItens": len(found)}
        answer = {"parametros": parametros, "pix": items}
        return 200, _Garbled(answer) if any(p["endToEndId"] in self._garbled for p in items) else answer

    def _op_get_pix(self, params, values, body):
        with self._lock:
            if params["e2eid"] not in self._pix:
                raise not_found("GET", "/pix/{e2eid}", "Pix não encontrado para o e2eid informado.")
            view = self._pix_view(params["e2eid"])
            return 200, _Garbled(view) if params["e2eid"] in self._garbled else view

    def _pix_view(self, e2e):
        pix = _copy(self._pix[e2e])
        if not pix.get("devolucoes"):
            pix.pop("devolucoes", None)
        pix.update(self._garbled.get(e2e, {}))
        return pix

    def garble(self, e2e, **fields):
        """From now on the bank shows Pix `e2e` (in GET /pix and GET
        /pix/{e2eid}) with `fields` instead: a bank that lists what the
        standard's schema refuses (valor="10,00"). Not checked against the
        schema, on purpose: the answers that carry it are not recorded as
        violations either."""
        with self._lock:
            self._garbled[e2e] = dict(fields)

    def _op_put_devolucao(self, params, values, body):
        e2e, dev_id = params["e2eid"], params["id"]
        refuse = functools.partial(rule, "PUT", "/pix/{e2eid}/devolucao/{id}")
        if not re.fullmatch(r"[a-zA-Z0-9]{1,35}", dev_id):
            raise refuse("O parâmetro id deve ter de 1 a 35 caracteres alfanuméricos.", "{id}")
        if not re.fullmatch(r"\d{1,10}\.\d{2}", body["valor"]) or _cents(body["valor"]) == 0:
            raise refuse("O campo devolucao.valor não respeita o _schema_.", "$.valor")
        with self._lock:
            pix = self._pix.get(e2e)
            if pix is None:
                raise not_found("PUT", "/pix/{e2eid}/devolucao/{id}",
                                "Pix não encontrado para o e2eid informado.")
            devs = pix.setdefault("devolucoes", [])
            for d in devs:
                if d["id"] == dev_id:
                    if d["valor"] == body["valor"] and d.get("natureza") == body.get("natureza", "ORIGINAL"):
                        return 201, _copy(d)
                    raise refuse("A presente requisição de devolução apresenta um {id} já utilizado por outra "
                                 "requisição de devolução para o {e2eid} em questão.", "{id}")
            taken = sum(_cents(d["valor"]) for d in devs if d["status"] != "NAO_REALIZADO")
            if taken + _cents(body["valor"]) > _cents(pix["valor"]):
                raise refuse("A presente requisição de devolução, em conjunto com as demais prévias devoluções, "
                             "excederia o valor do pix originário.", "$.valor")
            now = _now()
            dev = {"id": dev_id, "rtrId": self._e2e("D", self.ispb, now), "valor": body["valor"],
                   "natureza": body.get("natureza", "ORIGINAL"), "horario": {"solicitacao": rfc3339(now)},
                   "status": "EM_PROCESSAMENTO"}
            if "descricao" in body:
                dev["descricao"] = body["descricao"]
            devs.append(dev)
            return 201, _copy(dev)

    def _op_get_devolucao(self, params, values, body):
        with self._lock:
            for d in self._pix.get(params["e2eid"], {}).get("devolucoes", []):
                if d["id"] == params["id"]:
                    return 200, _copy(d)
        raise not_found("GET", "/pix/{e2eid}/devolucao/{id}",
                        "devolução representada por {id} não encontrada para o e2eid informado.")

    def _op_put_webhook(self, params, values, body):
        chave = params["chave"]
        refuse = functools.partial(rule, "PUT", "/webhook/{chave}")
        if chave not in self.keys:
            raise refuse("o parâmetro {chave} não corresponde a uma chave DICT pertencente a este usuário "
                         "recebedor.", "{chave}")
        parts = urllib.parse.urlsplit(body["webhookUrl"])
        if parts.scheme != "https" or not parts.hostname:
            raise refuse("Campo webhook.webhookUrl não respeita o _schema_: an https URL is required.",
                         "$.webhookUrl")
        with self._lock:
            self._webhooks[chave] = {"webhookUrl": body["webhookUrl"], "chave": chave, "criacao": rfc3339(_now())}
        return 200, None

    def _op_get_webhook(self, params, values, body):
        with self._lock:
            hook = self._webhooks.get(params["chave"])
        if hook is None:
            raise not_found("GET", "/webhook/{chave}", "o webhook denotado por {chave} não encontra-se "
                            "estabelecido.")
        return 200, dict(hook)

    def _op_delete_webhook(self, params, values, body):
        with self._lock:
            if self._webhooks.pop(params["chave"], None) is None:
                raise not_found("DELETE", "/webhook/{chave}", "o webhook denotado por {chave} não "
                                "encontra-se estabelecido.")
        return 204, None

    # ---- the money side, driven by the test ----

    def _e2e(self, letter, ispb, moment):
        """E (or D for a refund's rtrId) + ISPB + yyyyMMddHHmm (UTC) + 11
        alphanumerics: 32 characters."""
        stamp = moment.astimezone(datetime.timezone.utc).strftime("%Y%m%d%H%M")
        return letter + ispb + stamp + "".join(self._rng.choice(_ALNUM) for _ in range(11))

    def _settle(self, chave, valor, txid, info, when, payer_ispb, pagador, componentes=False):
        """componentes: the Pix's componentesValor (False: {"original": valor};
        None: none)."""
        moment = parse_time(when) if when is not None else _now()
        pix = {"endToEndId": self._e2e("E", payer_ispb or self.payer_ispb, moment)}
        if txid is not None:
            pix["txid"] = txid
        pix["valor"] = valor
        if componentes is False:
            pix["componentesValor"] = {"original": {"valor": valor}}
        elif componentes is not None:
            pix["componentesValor"] = componentes
        pix.update({"chave": chave, "horario": rfc3339(moment)})
        if info is not None:
            pix["infoPagador"] = info
        bcb.validate("Pix", pix)
        with self._lock:
            self._pix[pix["endToEndId"]] = pix
            self._pix_meta[pix["endToEndId"]] = {"horario": moment, "pagador": dict(pagador or {})}
        return pix

    def pay(self, txid, valor=None, info=None, when=None, payer_ispb=None, pagador=None, force=False):
        """A payer settles the charge `txid`: a Pix of `valor` (default the
        charge's amount) at `when` (a datetime or RFC 3339; default now),
        infoPagador `info`; the charge becomes CONCLUIDA and lists it.
        pagador: {"cpf": ...} or {"cnpj": ...}, for GET /pix's filters.
        ValueError for an unknown charge, or one not ATIVA or expired at
        `when` (unless force). Returns the Pix (a copy). With auto_notify
        the webhook of its key hears of it."""
        with self._lock:
            cob = self._cobs.get(txid)
            if cob is None:
                raise ValueError("no charge with txid %s" % txid)
            moment = parse_time(when) if when is not None else _now()
            expires = cob["criacao"] + datetime.timedelta(seconds=cob["asked"]["calendario"]["expiracao"])
            if not force and cob["status"] != "ATIVA":
                raise ValueError("charge %s is %s" % (txid, cob["status"]))
            if not force and moment > expires:
                raise ValueError("charge %s expired at %s" % (txid, rfc3339(expires)))
            pix = self._settle(cob["asked"]["chave"], valor or cob["asked"]["valor"]["original"], txid, info,
                               moment, payer_ispb, pagador)
            cob["pix"].append(pix["endToEndId"])
            cob["status"] = "CONCLUIDA"
        if self.auto_notify:
            self.notify([pix["endToEndId"]], wait=False)
        return _copy(pix)

    def pay_key(self, valor, chave=None, txid=None, info=None, when=None, payer_ispb=None, pagador=None):
        """A Pix to the key itself (a static BR Code or a transfer): no
        charge, no txid unless given (a static code's, 1-25 characters).
        Returns the Pix. With auto_notify and a txid, the webhook hears of
        it (the standard notifies only Pix with a txid)."""
        pix = self._settle(chave or self.key, valor, txid, info, when, payer_ispb, pagador)
        if self.auto_notify and txid:
            self.notify([pix["endToEndId"]], wait=False)
        return _copy(pix)

    def settle_refund(self, e2e, dev_id, status="DEVOLVIDO", motivo=None, when=None):
        """The refund `dev_id` of Pix `e2e` ends DEVOLVIDO (horario.liquidacao
        set) or NAO_REALIZADO (motivo). Returns the Devolucao. With
        auto_notify the webhook hears of the Pix."""
        if status not in ("DEVOLVIDO", "NAO_REALIZADO"):
            raise ValueError("a refund settles DEVOLVIDO or NAO_REALIZADO")
        with self._lock:
            for d in self._pix.get(e2e, {}).get("devolucoes", []):
                if d["id"] == dev_id:
                    break
            else:
                raise ValueError("no refund %s of Pix %s" % (dev_id, e2e))
            d["status"] = status
            if status == "DEVOLVIDO":
                d["horario"]["liquidacao"] = rfc3339(parse_time(when) if when else _now())
            if motivo is not None:
                d["motivo"] = motivo
            bcb.validate("Devolucao", d)
            out = _copy(d)
        if self.auto_notify and "txid" in self._pix[e2e]:
            self.notify([e2e], wait=False)
        return out

    def cob(self, txid):
        """The charge as GET /cob/{txid} shows it (None if unknown)."""
        with self._lock:
            return self._cob_view(self._cobs[txid]) if txid in self._cobs else None

    def pix(self, e2e):
        """The Pix as GET /pix/{e2eid} shows it (None if unknown)."""
        with self._lock:
            return self._pix_view(e2e) if e2e in self._pix else None

    def webhook(self, chave=None):
        """The webhookUrl registered for a key (default bank.key), or None."""
        with self._lock:
            hook = self._webhooks.get(chave or self.key)
            return hook["webhookUrl"] if hook else None

    # ---- the webhook ----

    def notify(self, pix_list, wait=True, timeout=10.0, batch=None, validate=True):
        """POST {"pix": [...]} to {webhookUrl}/pix of each Pix's key: `/pix`
        is appended to the whole URL, query string included, as banks do.
        pix_list holds endToEndIds (the Pix as it is now, refunds included)
        or Pix objects (sent as given). One POST per key, or per `batch`
        Pix. The bank presents webhook_cert and trusts receiver_ca; the
        webhook_faults knobs apply. validate: each body must pass the spec
        (bcb.validate_webhook_body), else SpecViolation is raised and
        nothing is sent; False sends it anyway (to test a receiver's
        refusals). wait: return when every POST is over; else at once.
        Returns the bankhook.Delivery records, also in bank.deliveries.
        ValueError when a key has no webhook or the bank no receiver_ca."""
        groups = collections.OrderedDict()
        posts = []
        with self._lock:
            for item in pix_list:
                if isinstance(item, str) and item not in self._pix:
                    raise ValueError("no Pix %s" % item)
                pix = self._pix_view(item) if isinstance(item, str) else item
                chave = pix.get("chave") or self.key
                if chave not in self._webhooks:
                    raise ValueError("no webhook registered for the key %s" % chave)
                groups.setdefault(chave, []).append(pix)
            for chave, items in groups.items():
                size = batch or len(items)
                for i in range(0, len(items), size):
                    body = json.dumps({"pix": items[i:i + size]}, ensure_ascii=False).encode()
                    if validate:
                        bcb.validate_webhook_body(body)
                    posts.append((self._webhooks[chave]["webhookUrl"] + "/pix", chave, body))
        return self._sender.send(posts, wait, timeout)


class _Garbled(dict):
    """An answer that carries a Pix garble() spoiled on purpose: not checked
    against the schema."""


def _copy(value):
    return json.loads(json.dumps(value))
