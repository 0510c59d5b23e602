"""Pix Automático at the test bank (testbank.py): recurrences (rec), their
locations (locrec) and their webhook (webhookrec), as the API Pix 2.9.0
says, every request and answer checked against the official schema by
testbank's dispatcher (bankspec.OPERATIONS names these operations).

    POST /locrec                 a location of type rec
    POST /rec                    a recurrence (RecSolicitada), CRIADA
    GET  /rec                    the list, by creation date (inicio, fim), as
                                 the standard says: not by change
    GET  /rec/{idRec}            RecCompleta, with dadosQR (JORNADA_2) while
                                 it has a location
    PATCH /rec/{idRec}           {"status": "CANCELADA"}
    PUT/GET/DELETE /webhookrec   one URL per API client

The tests drive the payer's side:

    bank.rec_status(idRec, "APROVADA" | "REJEITADA" | "EXPIRADA" | "CANCELADA",
                    notify=True)   the recurrence moves; with notify, POST
                                   {webhookrec}/rec {"recs": [RecNotification]}
    bank.notify_rec([idRec, ...])  that POST for recurrences as they are
    bank.rec(idRec)                the recurrence as the bank keeps it
    bank.calls["POST /rec"], bank.rec_bodies   what pixrelay sent
"""
import datetime
import functools
import json
import re
import threading
import uuid

import bcb
from bankspec import Refusal, not_found, rule

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_FINAL = ("REJEITADA", "EXPIRADA", "CANCELADA")
_AHEAD = {"CRIADA": 0, "APROVADA": 1, "REJEITADA": 2, "EXPIRADA": 2, "CANCELADA": 2}
_CLOSING = {
    "REJEITADA": ("rejeicao", {"codigo": "AP13", "descricao": "Recusada pelo usuário pagador"}),
    "EXPIRADA": None,
    "CANCELADA": ("cancelamento", {"solicitante": "USUARIO_PAGADOR", "codigo": "ACCL",
                                   "descricao": "Cancelada pelo usuário pagador"}),
}


def _rfc3339(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def _tlv(tag, value):
    return "%02d%02d%s" % (tag, len(value), value)


def _crc16(text):
    crc = 0xFFFF
    for b in text.encode():
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def br_code_rec(location, name, city):
    """The QR of a recurrence alone (JORNADA_2): field 26 with the GUI only,
    no amount, field 80 with the GUI and the recurrence's location."""
    body = (_tlv(0, "01") + _tlv(26, _tlv(0, "br.gov.bcb.pix")) + _tlv(52, "0000") + _tlv(53, "986")
            + _tlv(58, "BR") + _tlv(59, name[:25]) + _tlv(60, city[:15]) + _tlv(62, _tlv(5, "***"))
            + _tlv(80, _tlv(0, "br.gov.bcb.pix") + _tlv(25, location)) + "6304")
    return body + "%04X" % _crc16(body)


class RecurrenceOps:
    """What TestBank learns for Pix Automático (mixed into it)."""

    def _rec_init(self):
        self._locrecs = {}      # id -> {"id", "location", "criacao", "idRec"?}
        self._recs = {}         # idRec -> the recurrence (RecCompleta without dadosQR)
        self._rec_created = {}  # idRec -> datetime of creation
        self._webhookrec = None
        self._next_locrec = 1000
        self.rec_bodies = []    # the POST /rec bodies received
        self.forge_rec = None   # "qr-key" | "qr-location" | "idrec" | None
        self.recebedor = {"cnpj": "11222333000181", "nome": "LOJA DE TESTE SA"}

    def _now_rec(self):
        return datetime.datetime.now(datetime.timezone.utc)

    # ---- operations ----

    def _op_post_locrec(self, params, values, body):
        with self._lock:
            now = self._now_rec()
            loc_id, self._next_locrec = self._next_locrec, self._next_locrec + 1
            loc = {"id": loc_id, "location": "%s/qr/v2/rec/%s" % (self.location_host, uuid.UUID(
                int=self._rng.getrandbits(128), version=4).hex), "criacao": _rfc3339(now)}
            self._locrecs[loc_id] = loc
            return 201, dict(loc)

    def _op_post_rec(self, params, values, body):
        refuse = functools.partial(rule, "POST", "/rec")
        self.rec_bodies.append(json.loads(json.dumps(body)))
        now = self._now_rec()
        cal = body["calendario"]
        if cal["dataInicial"] < now.date().isoformat():
            raise refuse("O campo rec.calendario.dataInicial é anterior à data de criação da recorrência.",
                         "$.calendario.dataInicial")
        if cal.get("dataFinal") and cal["dataFinal"] < cal["dataInicial"]:
            raise refuse("O campo rec.calendario.dataFinal é anterior ao campo rec.calendario.dataInicial.",
                         "$.calendario.dataFinal")
        valor = body.get("valor", {})
        if "valorRec" in valor and "valorMinimoRecebedor" in valor:
            raise refuse("Ambos os campos rec.valor.valorRec e rec.valor.valorMinimoRecebedor estão "
                         "preenchidos.", "$.valor")
        with self._lock:
            loc = None
            if "loc" in body:
                loc = self._locrecs.get(body["loc"])
                if loc is None:
                    raise refuse("O location referenciado por rec.loc inexiste.", "$.loc")
                if loc.get("idRec"):
                    raise refuse("O location referenciado por rec.loc já está sendo utilizado por outra "
                                 "recorrência.", "$.loc")
            retry = "R" if body["politicaRetentativa"] == "PERMITE_3R_7D" else "N"
            idrec = "R" + retry + self.ispb + now.strftime("%Y%m%d") + "".join(
                self._rng.choice(_ALNUM) for _ in range(11))
            if self.forge_rec == "idrec":
                idrec = "R" + ("N" if retry == "R" else "R") + idrec[2:]
            rec = {"idRec": idrec, "vinculo": body["vinculo"], "calendario": body["calendario"],
                   "politicaRetentativa": body["politicaRetentativa"], "recebedor": dict(self.recebedor),
                   "status": "CRIADA", "atualizacao": [{"status": "CRIADA", "data": _rfc3339(now)}]}
            if valor:
                rec["valor"] = valor
            if loc is not None:
                loc["idRec"] = idrec
                rec["loc"] = dict(loc)
            self._recs[idrec] = rec
            self._rec_created[idrec] = now
            return 201, json.loads(json.dumps(rec))

    def _rec_view(self, idrec, qr=True):
        rec = json.loads(json.dumps(self._recs[idrec]))
        if qr and "loc" in rec:
            location = rec["loc"]["location"]
            if self.forge_rec == "qr-location":
                location = "qr.fraude.example/qr/v2/rec/" + location.rsplit("/", 1)[1]
            code = br_code_rec(location, self.merchant_name, self.merchant_city)
            if self.forge_rec == "qr-key":
                # a code that asks for a payment to a key now
                code = code.replace("26180014br.gov.bcb.pix", "26" + "%02d" % (18 + 4 + 16) +
                                    "0014br.gov.bcb.pix0116fraude@x.example", 1)
                body = code[:-4]
                code = body + "%04X" % _crc16(body)
            rec["dadosQR"] = {"jornada": "JORNADA_2", "pixCopiaECola": code}
        return rec

    def _op_get_rec(self, params, values, body):
        with self._lock:
            if params["idRec"] not in self._recs:
                raise not_found("GET", "/rec/{idRec}", "Recorrência não encontrada para o idRec informado.")
            return 200, self._rec_view(params["idRec"])

    def _op_patch_rec(self, params, values, body):
        refuse = functools.partial(rule, "PATCH", "/rec/{idRec}")
        with self._lock:
            rec = self._recs.get(params["idRec"])
            if rec is None:
                raise not_found("PATCH", "/rec/{idRec}", "Recorrência não encontrada para o idRec informado.")
            if rec["status"] in _FINAL:
                raise refuse("A recorrência encontra-se expirada, cancelada ou rejeitada.", "$.status")
            if body.get("status") == "CANCELADA":
                self._rec_move(rec, "CANCELADA", ("cancelamento", {
                    "solicitante": "USUARIO_RECEBEDOR", "codigo": "SLCR",
                    "descricao": "Cancelada pelo usuário recebedor"}))
            return 200, self._rec_view(params["idRec"], qr=False)

    def _op_get_rec_list(self, params, values, body):
        refuse = functools.partial(rule, "GET", "/rec")
        try:
            inicio = datetime.datetime.fromisoformat(values["inicio"].replace("Z", "+00:00"))
            fim = datetime.datetime.fromisoformat(values["fim"].replace("Z", "+00:00"))
        except ValueError as e:
            raise refuse("inicio/fim: %s" % e, "?inicio")
        if fim < inicio:
            raise refuse("o timestamp representado pelo parâmetro fim é anterior ao timestamp "
                         "representado pelo parâmetro inicio.", "?fim")
        page = values.get("paginacao.paginaAtual", 0)
        per = values.get("paginacao.itensPorPagina", 100)
        with self._lock:
            # the standard's list filters by creation, not by change
            found = sorted((t, i) for i, t in self._rec_created.items() if inicio <= t <= fim
                           and ("status" not in values or self._recs[i]["status"] == values["status"]))
            items = [self._rec_view(i, qr=False) for _, i in found[page * per:(page + 1) * per]]
        return 200, {"parametros": {"inicio": values["inicio"], "fim": values["fim"], "paginacao": {
            "paginaAtual": page, "itensPorPagina": per, "quantidadeDePaginas": max(1, -(-len(found) // per)),
            "quantidadeTotalDeItens": len(found)}}, "recs": items}

    def _op_put_webhookrec(self, params, values, body):
        if not re.match(r"https://[^/\s]+", body["webhookUrl"]):
            raise rule("PUT", "/webhookrec", "o campo webhookUrl não respeita o _schema_: an https URL "
                       "is required.", "$.webhookUrl")
        with self._lock:
            self._webhookrec = {"webhookUrl": body["webhookUrl"], "criacao": _rfc3339(self._now_rec())}
        return 200, None

    def _op_get_webhookrec(self, params, values, body):
        with self._lock:
            if self._webhookrec is None:
                raise not_found("GET", "/webhookrec", "Webhook não encontrado.")
            return 200, dict(self._webhookrec)

    def _op_delete_webhookrec(self, params, values, body):
        with self._lock:
            if self._webhookrec is None:
                raise not_found("DELETE", "/webhookrec", "Webhook não encontrado.")
            self._webhookrec = None
        return 204, None

    # ---- the payer's side ----

    def _rec_move(self, rec, status, closing):
        rec["status"] = status
        rec["atualizacao"].append({"status": status, "data": _rfc3339(self._now_rec())})
        if closing:
            rec["encerramento"] = {closing[0]: dict(closing[1])}
        if status == "APROVADA":
            rec["pagador"] = {"cpf": "52998224725", "ispbParticipante": self.payer_ispb}
            rec["ativacao"] = {"tipoJornada": "JORNADA_2"}

    def rec(self, idrec):
        with self._lock:
            return self._rec_view(idrec)

    def rec_status(self, idrec, status, notify=True, wait=True):
        """The payer (or its bank, or time) moves recurrence idRec to
        status; with notify, the /rec callback tells the receiver. Returns
        the deliveries (or [])."""
        with self._lock:
            rec = self._recs[idrec]
            if _AHEAD[status] <= _AHEAD[rec["status"]]:
                raise ValueError("%s is %s already, or past it" % (idrec, rec["status"]))
            self._rec_move(rec, status, _CLOSING.get(status))
        return self.notify_rec([idrec], wait=wait) if notify else []

    def notify_rec(self, idrecs, wait=True, timeout=10.0):
        """POST {"recs": [RecNotification, ...]} to {webhookrec}/rec, the
        body checked against the schema first."""
        with self._lock:
            if self._webhookrec is None:
                raise ValueError("no webhookrec registered")
            items = []
            for idrec in idrecs:
                r = self._recs[idrec]
                item = {k: json.loads(json.dumps(r[k])) for k in ("idRec", "status", "atualizacao",
                                                                   "encerramento", "ativacao") if k in r}
                bcb.validate("RecNotification", item)
                items.append(item)
            body = json.dumps({"recs": items}, ensure_ascii=False).encode()
            url = self._webhookrec["webhookUrl"] + "/rec"
        return self._sender.send([(url, None, body)], wait, timeout)
