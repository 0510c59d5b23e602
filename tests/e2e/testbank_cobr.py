"""Pix Automático's recurring charges at the test bank (testbank.py):
cobr as the API Pix 2.9.0 says, every request and answer checked against
the official schema by testbank's dispatcher (bankspec.OPERATIONS names
these operations).

    PUT /cobr/{txid}    a recurring charge (CobRSolicitada) of an approved
                        recurrence, CRIADA; refused as the standard says: a
                        due date before today, a txid in use, a second
                        charge of the recurrence's cycle, a recurrence not
                        APROVADA
    GET /cobr/{txid}    CobRCompleta
    PATCH /cobr/{txid}  {"status": "CANCELADA"}, before the first attempt's date
    PUT/GET/DELETE /webhookcobr   one URL per API client
    POST /cobr/{txid}/retentativa/{data}
                        a retry on a future date, when the recurrence's policy
                        allows and no attempt is SOLICITADA or AGENDADA

The tests read what pixrelay sent:

    bank.cobr(txid)         the recurring charge as the bank keeps it
    bank.cobr_bodies        the PUT /cobr bodies received
"""
import datetime
import functools
import json
import re

import bcb
from bankspec import not_found, rule


def _rfc3339(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)


def _cycle(periodicidade, date):
    """The recurrence's cycle a due date falls in: a week, else a month
    counted in the period's months."""
    d = datetime.date.fromisoformat(date)
    if periodicidade == "SEMANAL":
        return d.isocalendar()[:2]
    months = {"MENSAL": 1, "TRIMESTRAL": 3, "SEMESTRAL": 6, "ANUAL": 12}[periodicidade]
    return (d.year, (d.month - 1) // months)


class RecurringChargeOps:
    def _cobr_init(self):
        self._cobrs = {}        # txid -> CobRCompleta as the bank keeps it
        self.cobr_bodies = []   # the PUT /cobr bodies received
        self.retry_requests = []  # (txid, data) of each POST /cobr/{txid}/retentativa/{data}
        self._webhookcobr = None
        self.forge_cobr = None  # "valor" | "idrec": PUT /cobr answers another charge

    def _op_put_cobr(self, params, values, body):
        refuse = functools.partial(rule, "PUT", "/cobr/{txid}")
        self.cobr_bodies.append(json.loads(json.dumps(body)))
        now = self._now_rec()
        due = body["calendario"]["dataDeVencimento"]
        if due < now.date().isoformat():
            raise refuse("O campo cobr.calendario.dataDeVencimento é anterior à data de criação da "
                         "cobrança.", "$.calendario.dataDeVencimento")
        with self._lock:
            txid = params["txid"]
            if txid in self._cobrs:
                raise refuse("O campo cobr.txid encontra-se em uso.", "{txid}")
            rec = self._recs.get(body["idRec"])
            if rec is None or rec["status"] != "APROVADA":
                raise refuse("A recorrência referenciada por cobr.idRec inexiste ou não está "
                             "aprovada.", "$.idRec")
            per = rec["calendario"]["periodicidade"]
            for c in self._cobrs.values():
                if (c["idRec"] == body["idRec"] and c["status"] not in ("REJEITADA", "CANCELADA")
                        and _cycle(per, c["calendario"]["dataDeVencimento"]) == _cycle(per, due)):
                    raise refuse("Existe uma CobR com status diferente de REJEITADA e CANCELADA "
                                 "referente ao mesmo cobr.idRec com calendario.dataDeVencimento no "
                                 "mesmo ciclo.", "$.calendario.dataDeVencimento")
            cobr = {"idRec": body["idRec"], "txid": txid,
                    "calendario": {"criacao": now.date().isoformat(), "dataDeVencimento": due},
                    "valor": dict(body["valor"]), "ajusteDiaUtil": body["ajusteDiaUtil"],
                    "recebedor": dict(self.recebedor, **body["recebedor"]),
                    "politicaRetentativa": rec["politicaRetentativa"], "status": "CRIADA",
                    "atualizacao": [{"status": "CRIADA", "data": _rfc3339(now)}]}
            for k in ("infoAdicional", "devedor"):
                if k in body:
                    cobr[k] = json.loads(json.dumps(body[k]))
            self._cobrs[txid] = cobr
            view = json.loads(json.dumps(cobr))
            del view["politicaRetentativa"]
            if self.forge_cobr == "valor":
                view["valor"]["original"] = "1.00"
            elif self.forge_cobr == "idrec":
                view["idRec"] = view["idRec"][:-1] + ("a" if view["idRec"][-1] != "a" else "b")
            return 201, view

    def _op_get_cobr(self, params, values, body):
        with self._lock:
            if params["txid"] not in self._cobrs:
                raise not_found("GET", "/cobr/{txid}", "Cobrança não encontrada para o txid informado.")
            return 200, json.loads(json.dumps(self._cobrs[params["txid"]]))

    def _op_patch_cobr(self, params, values, body):
        refuse = functools.partial(rule, "PATCH", "/cobr/{txid}")
        with self._lock:
            c = self._cobrs.get(params["txid"])
            if c is None:
                raise not_found("PATCH", "/cobr/{txid}", "Cobrança não encontrada para o txid informado.")
            if self._now_rec().date().isoformat() >= c["calendario"]["dataDeVencimento"]:
                raise refuse("Não é possível cancelar uma cobrança em uma data igual ou maior que a data "
                             "prevista da primeira tentativa de liquidação.", "$.status")
            if c["status"] in ("CONCLUIDA", "EXPIRADA", "REJEITADA", "CANCELADA"):
                raise refuse("A cobrança não pode ser cancelada: status %s." % c["status"], "$.status")
            if body.get("status") == "CANCELADA":
                self.cobr_move(params["txid"], "CANCELADA", closing={"cancelamento": {
                    "solicitante": "USUARIO_RECEBEDOR", "codigo": "SLCR",
                    "descricao": "Cancelamento solicitado pelo usuário recebedor"}})
            view = json.loads(json.dumps(c))
            for k in ("politicaRetentativa", "tentativas", "encerramento", "atualizacao", "pix"):
                view.pop(k, None)
            return 200, view

    def _op_post_retentativa(self, params, values, body):
        refuse = functools.partial(rule, "POST", "/cobr/{txid}/retentativa/{data}")
        with self._lock:
            c = self._cobrs.get(params["txid"])
            if c is None:
                raise not_found("POST", "/cobr/{txid}/retentativa/{data}",
                                "Cobrança não encontrada para o txid informado.")
            self.retry_requests.append((params["txid"], params["data"]))
            if c["politicaRetentativa"] != "PERMITE_3R_7D":
                raise refuse("A política configurada na recorrência não permite retentativa de "
                             "cobrança.", "{data}")
            if params["data"] <= self._now_rec().date().isoformat():
                raise refuse("O parâmetro data não corresponde a uma data futura.", "{data}")
            tries = c.get("tentativas", [])
            if any(t["status"] in ("SOLICITADA", "AGENDADA") for t in tries):
                raise refuse("Existe uma tentativa com status SOLICITADA ou AGENDADA.", "{data}")
            self.cobr_move(params["txid"], attempt={"dataLiquidacao": params["data"], "tipo": "NTAG",
                                                    "status": "SOLICITADA"})
            return 201, json.loads(json.dumps(c))

    def _op_put_webhookcobr(self, params, values, body):
        if not re.match(r"https://[^/\s]+", body["webhookUrl"]):
            raise rule("PUT", "/webhookcobr", "o campo webhookUrl não respeita o _schema_: an https URL "
                       "is required.", "$.webhookUrl")
        with self._lock:
            self._webhookcobr = {"webhookUrl": body["webhookUrl"], "criacao": _rfc3339(self._now_rec())}
        return 200, None

    def _op_get_webhookcobr(self, params, values, body):
        with self._lock:
            if self._webhookcobr is None:
                raise not_found("GET", "/webhookcobr", "Webhook não encontrado.")
            return 200, dict(self._webhookcobr)

    def _op_delete_webhookcobr(self, params, values, body):
        with self._lock:
            if self._webhookcobr is None:
                raise not_found("DELETE", "/webhookcobr", "Webhook não encontrado.")
            self._webhookcobr = None
        return 204, None

    def notify_cobr(self, txids, wait=True, timeout=10.0):
        """POST the /cobr callback of the charges as they are to
        {webhookcobr}/cobr."""
        with self._lock:
            if self._webhookcobr is None:
                raise ValueError("no webhookcobr registered")
            url = self._webhookcobr["webhookUrl"] + "/cobr"
        return self._sender.send([(url, None, self.cobr_notification(txids))], wait, timeout)

    def cobr(self, txid):
        with self._lock:
            return json.loads(json.dumps(self._cobrs[txid]))

    # ---- the payer's side ----

    def cobr_move(self, txid, status=None, attempt=None, paid=False, closing=None):
        """The payer's bank acts on recurring charge txid: `attempt` (a dict
        {dataLiquidacao, tipo, status, rejeicao?}) is added to its
        tentativas or, with the same date and tipo, replaces that one's
        status; `status` moves the cobr; `paid` adds the Pix of its amount
        (CONCLUIDA). Returns the Pix's endToEndId, or None."""
        e2e = None
        with self._lock:
            c = self._cobrs[txid]
            now = _rfc3339(self._now_rec())
            if attempt:
                tries = c.setdefault("tentativas", [])
                same = [t for t in tries if t["dataLiquidacao"] == attempt["dataLiquidacao"]
                        and t["tipo"] == attempt["tipo"]]
                if same:
                    t = same[0]
                    t["status"] = attempt["status"]
                    t["atualizacao"].append({"status": attempt["status"], "data": now})
                else:
                    t = {"dataLiquidacao": attempt["dataLiquidacao"], "tipo": attempt["tipo"],
                         "endToEndId": "E%s%s%s" % (self.payer_ispb, attempt["dataLiquidacao"].replace("-", ""),
                                                     "".join(self._rng.choice("abcdef0123456789") for _ in range(15))),
                         "status": attempt["status"], "atualizacao": [{"status": attempt["status"], "data": now}]}
                    tries.append(t)
                if "rejeicao" in attempt:
                    t["rejeicao"] = dict(attempt["rejeicao"])
            if paid:
                e2e = "E%s%s%s" % (self.payer_ispb, self._now_rec().strftime("%Y%m%d%H%M"),
                                   "".join(self._rng.choice("abcdefghijk0123456789") for _ in range(11)))
                c["pix"] = [{"endToEndId": e2e, "txid": txid, "valor": c["valor"]["original"],
                             "horario": now}]
                status = status or "CONCLUIDA"
            if status:
                c["status"] = status
                c["atualizacao"].append({"status": status, "data": now})
            if closing:
                c["encerramento"] = json.loads(json.dumps(closing))
        return e2e

    def cobr_refund(self, txid, status="DEVOLVIDO", natureza="ORIGINAL"):
        """A refund of the whole Pix that paid txid, as its bank reports it in
        pix[].devolucoes."""
        with self._lock:
            c = self._cobrs[txid]
            pix = c["pix"][0]
            now = _rfc3339(self._now_rec())
            dev = {"id": "D" + pix["endToEndId"][1:26], "rtrId": "D" + pix["endToEndId"][1:],
                   "valor": pix["valor"], "natureza": natureza, "status": status,
                   "horario": {"solicitacao": now}}
            if status == "DEVOLVIDO":
                dev["horario"]["liquidacao"] = now
            pix["devolucoes"] = [dev]

    def cobr_notification(self, txids):
        """The body of a /cobr callback for the charges as they are,
        {"cobsr": [CobRNotification, ...]}, each item checked against the
        schema first."""
        with self._lock:
            items = []
            for txid in txids:
                c = self._cobrs[txid]
                item = {k: json.loads(json.dumps(c[k])) for k in (
                    "idRec", "txid", "status", "atualizacao", "tentativas", "encerramento", "pix") if k in c}
                bcb.validate("CobRNotification", item)
                items.append(item)
            return json.dumps({"cobsr": items}, ensure_ascii=False).encode()
