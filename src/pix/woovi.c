/* woovi: Woovi's (OpenPix's) JSON read as hostile input, no I/O: a
 * notification's event and ids, transactions as struct bankpix (refunds
 * linked to their payments by sorting, so a page costs n log n), and the
 * answers to creating a charge and a refund. What is done with them is the
 * bank store's (src/store/banks_receive.c), as for a bank's Pix; the
 * signature of a notification is pix/provsig.c's.
 */
#include "pixrelay/pix/woovi.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/timefmt.h"

#include "pixrelay/pix/provjson.h"

#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values one transaction may bring at most (itself, its customer, payer,
 * charge with its own customer and payer, webhookSent...): Woovi's own
 * examples hold about 120. The tree of a page is capped at this times
 * WOOVI_PAGE_MAX. */
#define VALUES_PER_TX 512
#define PAGE_VALUES (WOOVI_PAGE_MAX * VALUES_PER_TX + 16)
#define CORRELATION_MAX 140 /* characters of a correlationID the merchant's event shows */
#define STATUS_MAX 23
#define BRCODE_MAX 512 /* characters of a charge's brCode */

#define TIME_RULE                                                                                  \
	"must be an ISO 8601 date-time with a time zone, like \"2021-03-03T12:33:00.536Z\""

/* Woovi's value: integer cents, 1 to WOOVI_VALUE_MAX, never a float. */
static int cents_at(yajl_val obj, const char *key, const char *path, int64_t *cents, char *err,
		    size_t errlen)
{
	yajl_val v = provjson_optional(obj, key);
	int64_t c = 0;

	if (!v)
		return provjson_fail(err, errlen, path, key, "is required");
	if (!json_is_int64(v, &c) || c < 1 || c > WOOVI_VALUE_MAX)
		return provjson_fail(err, errlen, path, key,
				     "must be a whole number of cents from 1 to %lld",
				     WOOVI_VALUE_MAX);
	*cents = c;
	return 0;
}

/* A transactionID (`key`) that makes an id "wv:<it>". */
static int transaction_at(yajl_val obj, const char *key, const char *path, const char **out,
			  char *err, size_t errlen)
{
	return provjson_id_at(obj, key, path, WOOVI_TRANSACTION_ID_MAX, out, err, errlen);
}

int woovi_refund_id(const char *e2e, const char *correlation, const char *transaction,
		    char out[BANKPIX_REFUND_ID_MAX + 1])
{
	const char *s = e2e && *e2e ? e2e : correlation && *correlation ? correlation : transaction;

	return provjson_refund_id(s, out);
}

/* ---- a payment ---- */

/* What a payment gives, its strings borrowed from the tree. */
struct pay {
	const char *transaction, *e2e, *time, *correlation, *chave, *info;
	int64_t cents;
	long long ms;
	size_t index; /* in the page; orphans: their first refund's */
	struct bankpix_refund *refunds;
	size_t nrefunds;
};

/* The payment `tx` (a transaction, or a charge when `charge_only`: a
 * refund's payment that is not on the page, its time then the charge's
 * paidAt) into *p, or -1 with err. */
static int pay_read(yajl_val tx, const char *path, bool charge_only, struct pay *p, char *err,
		    size_t errlen)
{
	yajl_val charge;
	const char *chave = NULL;
	char cpath[64];

	memset(p, 0, sizeof(*p));
	if (!YAJL_IS_OBJECT(tx))
		return provjson_fail(err, errlen, path, "", "must be an object");
	if (transaction_at(tx, "transactionID", path, &p->transaction, err, errlen) < 0 ||
	    cents_at(tx, "value", path, &p->cents, err, errlen) < 0 ||
	    provjson_time_at(tx, charge_only ? "paidAt" : "time", path, true, bankpix_time_ms,
			     TIME_RULE, &p->time, &p->ms, err, errlen) < 0)
		return -1;
	if (!charge_only) {
		const char *key = provjson_optional(tx, "endToEndId") ? "endToEndId" : "endToEndID";

		if (provjson_string_at(tx, key, path, false, 0, &p->e2e, err, errlen) < 0)
			return -1;
		if (p->e2e && !provjson_is_token(p->e2e, WOOVI_ID_MAX))
			return provjson_fail(err, errlen, path, key,
					     "must be 1 to %d printable characters", WOOVI_ID_MAX);
		if (provjson_string_at(tx, "infoPagador", path, false, BANKPIX_TEXT_MAX, &p->info,
				       err, errlen) < 0 ||
		    provjson_string_at(tx, "pixKey", path, false, BANKPIX_CHAVE_MAX, &chave, err,
				       errlen) < 0)
			return -1;
		charge = provjson_optional(tx, "charge");
		if (charge && !YAJL_IS_OBJECT(charge))
			return provjson_fail(err, errlen, path, "charge", "must be an object");
		provjson_path(cpath, sizeof(cpath), path, "charge");
	} else {
		charge = tx;
		snprintf(cpath, sizeof(cpath), "%s", path);
	}
	if (charge && !chave &&
	    provjson_string_at(charge, "pixKey", cpath, false, BANKPIX_CHAVE_MAX, &chave, err,
			       errlen) < 0)
		return -1;
	p->chave = chave;
	/* the charge's reference, shown to the merchant when it is text of a
	 * sensible length (a charge of pixrelay's: its id, the txid) */
	p->correlation = provjson_text(json_get(charge, "correlationID"), CORRELATION_MAX);
	return 0;
}

/* *p as a bankpix in out (strings owned; p's refunds taken). */
static void pay_item(struct pay *p, struct bankpix *out)
{
	yajl_gen g = provjson_pix_begin(out, WOOVI_ID_PREFIX, p->transaction, p->e2e,
					p->correlation, p->cents, p->ms);

	out->chave = p->chave ? mem_strdup(p->chave) : NULL;
	if (p->chave) {
		json_str(g, "chave");
		json_str(g, p->chave);
	}
	json_str(g, "horario");
	json_str(g, p->time);
	if (p->info) {
		json_str(g, "infoPagador");
		json_str(g, p->info);
	}
	provjson_pix_provider(g, p->refunds, p->nrefunds, "woovi");
	json_str(g, "transactionID");
	json_str(g, p->transaction);
	if (p->correlation) {
		json_str(g, "correlationID");
		json_str(g, p->correlation);
	}
	if (p->e2e && !provjson_is_e2e(p->e2e)) {
		/* Woovi's sandbox endToEndIds are not the standard's */
		json_str(g, "endToEndId");
		json_str(g, p->e2e);
	}
	provjson_pix_end(g, out, p->refunds, p->nrefunds);
	p->refunds = NULL;
	p->nrefunds = 0;
}

int woovi_transaction_pix(yajl_val tx, const char *path, struct bankpix *out, char *err,
			  size_t errlen)
{
	struct pay p;

	if (pay_read(tx, path, false, &p, err, errlen) < 0)
		return -1;
	pay_item(&p, out);
	return 0;
}

/* ---- a refund ---- */

struct refund {
	const char *payment; /* its charge's transactionID */
	yajl_val charge;
	size_t index;
	struct bankpix_refund r;
};

/* The REFUND transaction `tx` into *rf (its json owned), or -1 with err. */
static int refund_read(yajl_val tx, const char *path, size_t index, struct refund *rf, char *err,
		       size_t errlen)
{
	const char *e2e = NULL, *corr = NULL, *own = NULL, *time;
	char cpath[64];
	long long ms;

	memset(rf, 0, sizeof(*rf));
	rf->index = index;
	rf->charge = provjson_optional(tx, "charge");
	if (!rf->charge)
		return provjson_fail(err, errlen, path, "charge",
				     "is required (the charge of the payment refunded)");
	if (!YAJL_IS_OBJECT(rf->charge))
		return provjson_fail(err, errlen, path, "charge", "must be an object");
	provjson_path(cpath, sizeof(cpath), path, "charge");
	if (transaction_at(rf->charge, "transactionID", cpath, &rf->payment, err, errlen) < 0 ||
	    cents_at(tx, "value", path, &rf->r.cents, err, errlen) < 0 ||
	    provjson_time_at(tx, "time", path, true, bankpix_time_ms, TIME_RULE, &time, &ms, err,
			     errlen) < 0 ||
	    provjson_string_at(tx, "endToEndId", path, false, 0, &e2e, err, errlen) < 0 ||
	    provjson_string_at(tx, "correlationID", path, false, 0, &corr, err, errlen) < 0 ||
	    provjson_string_at(tx, "transactionID", path, false, 0, &own, err, errlen) < 0)
		return -1;
	if (woovi_refund_id(e2e, corr, own, rf->r.id) < 0)
		return provjson_fail(
		    err, errlen, path, "endToEndId",
		    "is required (or a correlationID or transactionID: a refund's id)");
	if (provjson_is_e2e(e2e))
		snprintf(rf->r.rtr_id, sizeof(rf->r.rtr_id), "%s", e2e);
	rf->r.status = BANKPIX_DEVOLVIDO; /* a REFUND transaction: the money went back */
	rf->r.json = provjson_refund_json(&rf->r, time, NULL);
	return 0;
}

/* ---- a page ---- */

/* A refused transaction: what the merchant gets of it (bankpix.h). */
static void refusal_make(yajl_val tx, size_t index, const char *err, struct bankpix_refusal *r)
{
	yajl_val v = json_get(tx, "transactionID");
	int64_t c;

	provjson_refusal_make(
	    tx, index, err, WOOVI_ID_PREFIX,
	    YAJL_IS_STRING(v) && provjson_is_id(v->u.string, WOOVI_TRANSACTION_ID_MAX) ? v->u.string
										       : NULL,
	    r);
	r->cents = json_is_int64(json_get(tx, "value"), &c) && c >= 0 ? c : -1;
	r->horario_ms = provjson_time_peek(json_get(tx, "time"), bankpix_time_ms);
	v = json_get(tx, "endToEndId");
	if (YAJL_IS_STRING(v) && provjson_is_e2e(v->u.string))
		snprintf(r->e2e, sizeof(r->e2e), "%s", v->u.string);
	v = json_get(tx, "pixKey");
	if (YAJL_IS_STRING(v))
		r->chave = mem_strdup(v->u.string);
}

static int pay_cmp(const void *a, const void *b)
{
	const struct pay *x = *(const struct pay *const *)a, *y = *(const struct pay *const *)b;
	int c = strcmp(x->transaction, y->transaction);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int refund_cmp(const void *a, const void *b)
{
	const struct refund *x = a, *y = b;
	int c = strcmp(x->payment, y->payment);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int pay_index_cmp(const void *a, const void *b)
{
	const struct pay *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static int refusal_cmp(const void *a, const void *b)
{
	const struct bankpix_refusal *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* The payment of `sorted` (n, by transactionID) whose id is `id`: the
 * first of the page when several are. */
static struct pay *pay_find(struct pay **sorted, size_t n, const char *id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(sorted[mid]->transaction, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(sorted[lo]->transaction, id) == 0 ? sorted[lo] : NULL;
}

static void tx_path(char *path, size_t size, const char *one, size_t index)
{
	if (one)
		snprintf(path, size, "%s", one);
	else
		snprintf(path, size, "transactions[%zu]", index);
}

/* Give the refunds rfs[0..n) (of one payment) to p, refusing those past
 * what a Pix may have. */
static void refunds_give(struct pay *p, struct refund *rfs, size_t n, yajl_val *txs,
			 const char *one, struct bankpix_batch *b)
{
	char path[48], err[BANKPIX_ERR_MAX];

	p->refunds =
	    mem_calloc(n < BANKPIX_REFUNDS_MAX ? n : BANKPIX_REFUNDS_MAX, sizeof(*p->refunds));
	for (size_t k = 0; k < n; k++) {
		if (p->nrefunds == BANKPIX_REFUNDS_MAX) {
			tx_path(path, sizeof(path), one, rfs[k].index);
			provjson_fail(err, sizeof(err), path, "",
				      "more than %d refunds of one payment", BANKPIX_REFUNDS_MAX);
			refusal_make(txs[rfs[k].index], rfs[k].index, err,
				     &b->refused[b->nrefused++]);
			free(rfs[k].r.json);
		} else {
			p->refunds[p->nrefunds++] = rfs[k].r;
		}
		rfs[k].r.json = NULL;
	}
}

/* Refunds rfs[0..n) of a payment not on the page: the payment read from
 * the charge of the first of them whose charge can be read, into *p; those
 * before it are refused, with why. Returns how many were refused (n: no
 * payment). */
static size_t orphan_read(struct refund *rfs, size_t n, yajl_val *txs, const char *one,
			  struct pay *p, struct bankpix_batch *b)
{
	char path[48], cpath[64], err[BANKPIX_ERR_MAX];
	size_t k = 0;

	for (; k < n; k++) {
		tx_path(path, sizeof(path), one, rfs[k].index);
		snprintf(cpath, sizeof(cpath), "%s.charge", path);
		if (pay_read(rfs[k].charge, cpath, true, p, err, sizeof(err)) == 0) {
			p->index = rfs[k].index;
			break;
		}
		refusal_make(txs[rfs[k].index], rfs[k].index, err, &b->refused[b->nrefused++]);
		free(rfs[k].r.json);
		rfs[k].r.json = NULL;
	}
	return k;
}

/* The transactions txs[0..n) (one page, or the one transaction of GET
 * /transaction/{id} when `one` names it) into *out. */
static void page_read(yajl_val *txs, size_t n, const char *one, struct bankpix_batch *out)
{
	struct bankpix_batch b = {0};
	struct pay *pays = NULL, **sorted = NULL;
	struct refund *refunds = NULL;
	size_t npays = 0, nrefunds = 0, norphans = 0;
	char path[48], err[BANKPIX_ERR_MAX];

	if (n) {
		b.items = mem_calloc(n, sizeof(*b.items));
		b.refused = mem_calloc(n, sizeof(*b.refused));
		pays = mem_calloc(n, sizeof(*pays));
		refunds = mem_calloc(n, sizeof(*refunds));
		sorted = mem_calloc(n, sizeof(*sorted));
	}
	for (size_t i = 0; i < n; i++) {
		yajl_val tx = txs[i];
		const char *type;
		int rc = 0;

		tx_path(path, sizeof(path), one, i);
		if (!YAJL_IS_OBJECT(tx))
			rc = provjson_fail(err, sizeof(err), path, "", "must be an object");
		else if ((rc = provjson_string_at(tx, "type", path, true, 0, &type, err,
						  sizeof(err))) < 0)
			;
		else if (strcmp(type, "PAYMENT") == 0) {
			rc = pay_read(tx, path, false, &pays[npays], err, sizeof(err));
			if (rc == 0)
				pays[npays++].index = i;
		} else if (strcmp(type, "REFUND") == 0) {
			rc = refund_read(tx, path, i, &refunds[nrefunds], err, sizeof(err));
			if (rc == 0)
				nrefunds++;
		}
		if (rc < 0)
			refusal_make(tx, i, err, &b.refused[b.nrefused++]);
	}

	/* each refund to its payment, by the payment's transactionID: the
	 * refunds of one payment are one run of the sorted refunds */
	for (size_t i = 0; i < npays; i++)
		sorted[i] = &pays[i];
	if (npays)
		qsort(sorted, npays, sizeof(*sorted), pay_cmp);
	if (nrefunds)
		qsort(refunds, nrefunds, sizeof(*refunds), refund_cmp);
	for (size_t i = 0, j; i < nrefunds; i = j) {
		struct pay *p = pay_find(sorted, npays, refunds[i].payment);

		for (j = i + 1; j < nrefunds && strcmp(refunds[j].payment, refunds[i].payment) == 0;
		     j++)
			;
		if (!p) {
			size_t k =
			    orphan_read(refunds + i, j - i, txs, one, &pays[npays + norphans], &b);

			if (k == j - i)
				continue;
			p = &pays[npays + norphans++];
			i += k;
		}
		refunds_give(p, refunds + i, j - i, txs, one, &b);
	}

	/* the items: the page's payments in its order, then the orphans in
	 * the order of their first refund */
	if (norphans > 1)
		qsort(pays + npays, norphans, sizeof(*pays), pay_index_cmp);
	for (size_t i = 0; i < npays + norphans; i++)
		pay_item(&pays[i], &b.items[b.n++]);
	if (b.nrefused > 1)
		qsort(b.refused, b.nrefused, sizeof(*b.refused), refusal_cmp);
	free(pays);
	free(sorted);
	free(refunds);
	*out = b;
}

int woovi_transactions_parse(const char *body, size_t len, struct bankpix_batch *out,
			     bool *has_next, char *err, size_t errlen)
{
	yajl_val root = NULL, list;
	bool next;
	int rc = WOOVI_MALFORMED;

	rc = provjson_page_parse(body, len, PAGE_VALUES, "transactions", WOOVI_PAGE_MAX, &root,
				 &list, err, errlen);
	if (rc != PROVJSON_OK) {
		rc = rc == PROVJSON_TOO_MANY ? WOOVI_TOO_MANY : WOOVI_MALFORMED;
		goto done;
	}
	rc = WOOVI_MALFORMED;
	if (provjson_bool_at(json_get(root, "pageInfo"), "hasNextPage", "pageInfo", &next, err,
			     errlen) < 0)
		goto done;
	page_read(list->u.array.values, list->u.array.len, NULL, out);
	*has_next = next;
	rc = WOOVI_OK;
done:
	yajl_tree_free(root);
	return rc;
}

int woovi_transaction_parse(const char *body, size_t len, struct bankpix_batch *out, char *err,
			    size_t errlen)
{
	yajl_val root = NULL, tx;
	int rc = WOOVI_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_object_at(root, "transaction", "", &tx, err, errlen) < 0)
		goto done;
	page_read(&tx, 1, "transaction", out);
	rc = WOOVI_OK;
done:
	yajl_tree_free(root);
	return rc;
}

/* ---- a notification ---- */

static const struct {
	const char *name;
	enum woovi_event kind;
} events[] = {
    {"OPENPIX:CHARGE_COMPLETED", WOOVI_CHARGE_COMPLETED},
    {"OPENPIX:TRANSACTION_RECEIVED", WOOVI_TRANSACTION_RECEIVED},
    {"OPENPIX:TRANSACTION_REFUND_RECEIVED", WOOVI_REFUND_RECEIVED},
    {"OPENPIX:CHARGE_EXPIRED", WOOVI_CHARGE_EXPIRED},
};

#define DISPUTE_PREFIX "OPENPIX:DISPUTE_"

int woovi_dispute_parse(const char *body, size_t len, struct woovi_dispute *out, char *err,
			size_t errlen)
{
	yajl_val root = NULL, d;
	struct woovi_dispute w = {0};
	const char *status, *e2e;
	int rc = WOOVI_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_object_at(root, "dispute", "", &d, err, errlen) < 0 ||
	    provjson_string_at(d, "status", "dispute", true, 23, &status, err, errlen) < 0 ||
	    provjson_string_at(d, "endToEndId", "dispute", true, WOOVI_ID_MAX, &e2e, err, errlen) <
		0)
		goto done;
	if (!provjson_is_token(e2e, WOOVI_ID_MAX)) {
		provjson_fail(err, errlen, "dispute", "endToEndId", "must be an id");
		goto done;
	}
	if (!json_is_int64(json_get(d, "value"), &w.cents) || w.cents < 1 ||
	    w.cents > WOOVI_VALUE_MAX) {
		provjson_fail(err, errlen, "dispute", "value", "must be cents from 1 to %lld",
			      WOOVI_VALUE_MAX);
		goto done;
	}
	snprintf(w.status, sizeof(w.status), "%s", status);
	snprintf(w.e2e, sizeof(w.e2e), "%s", e2e);
	*out = w;
	rc = WOOVI_OK;
done:
	yajl_tree_free(root);
	return rc;
}

void woovi_dispute_apply(struct bankpix *pix, const struct woovi_dispute *d)
{
	enum bankpix_refund_status st = BANKPIX_EM_PROCESSAMENTO;
	char when[32];

	if (strcmp(d->status, "ACCEPTED") == 0)
		st = BANKPIX_DEVOLVIDO;
	else if (strcmp(d->status, "REJECTED") == 0 || strcmp(d->status, "CANCELED") == 0)
		st = BANKPIX_NAO_REALIZADO;
	timefmt_rfc3339(when, ids_now_ms());
	provjson_med_add(&pix->refunds, &pix->nrefunds, pix->id, d->cents, st, when);
}

int woovi_notice_parse(const char *body, size_t len, struct woovi_notice *out, char *err,
		       size_t errlen)
{
	yajl_val root = NULL, pix, charge;
	struct woovi_notice n = {0};
	const char *event;
	int rc = WOOVI_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_string_at(root, "event", "", true, 0, &event, err, errlen) < 0)
		goto done;
	n.kind = WOOVI_OTHER;
	for (size_t i = 0; i < sizeof(events) / sizeof(*events); i++)
		if (strcmp(event, events[i].name) == 0)
			n.kind = events[i].kind;
	if (strncmp(event, DISPUTE_PREFIX, sizeof(DISPUTE_PREFIX) - 1) == 0)
		n.kind = WOOVI_DISPUTE;
	pix = json_get(root, "pix");
	if (!YAJL_IS_OBJECT(pix))
		pix = NULL;
	charge = json_get(root, "charge");
	if (!YAJL_IS_OBJECT(charge))
		charge = pix ? json_get(pix, "charge") : NULL;
	if (YAJL_IS_OBJECT(charge)) {
		provjson_token_copy(json_get(charge, "correlationID"), n.charge_correlation,
				    WOOVI_ID_MAX);
		provjson_token_copy(json_get(charge, "transactionID"), n.charge_transaction,
				    WOOVI_ID_MAX);
	}
	if (pix) {
		provjson_token_copy(json_get(pix, "transactionID"), n.pix_transaction,
				    WOOVI_ID_MAX);
		provjson_token_copy(json_get(pix, "endToEndId"), n.pix_e2e, WOOVI_ID_MAX);
	}
	n.event = mem_strdup(event);
	*out = n;
	rc = WOOVI_OK;
done:
	yajl_tree_free(root);
	return rc;
}

void woovi_notice_deinit(struct woovi_notice *n)
{
	free(n->event);
	memset(n, 0, sizeof(*n));
}

int woovi_notice_batch(const char *body, size_t len, struct bankpix_batch *out, char *err,
		       size_t errlen)
{
	struct woovi_notice n;
	yajl_val root = NULL, pix, charge;
	yajl_gen g;
	bool more = false;
	int rc = WOOVI_MALFORMED;

	if (woovi_notice_parse(body, len, &n, err, errlen) < 0)
		return WOOVI_MALFORMED;
	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_object_at(root, "pix", "", &pix, err, errlen) < 0)
		goto done;
	charge = json_get(root, "charge");
	if (!YAJL_IS_OBJECT(charge))
		charge = json_get(pix, "charge");
	/* the notification's pix as the transaction it is, read as a page */
	g = json_gen_new();
	json_open(g);
	json_str(g, "transactions");
	json_open_array(g);
	json_open(g);
	for (size_t i = 0; i < pix->u.object.len; i++) {
		const char *k = pix->u.object.keys[i];

		if (strcmp(k, "type") == 0 || strcmp(k, "charge") == 0)
			continue;
		json_str(g, k);
		json_write_value(g, pix->u.object.values[i]);
	}
	json_str(g, "type");
	json_str(g, n.kind == WOOVI_REFUND_RECEIVED ? "REFUND" : "PAYMENT");
	if (YAJL_IS_OBJECT(charge)) {
		json_str(g, "charge");
		json_write_value(g, charge);
	}
	json_close(g);
	json_close_array(g);
	json_str(g, "pageInfo");
	json_open(g);
	json_str(g, "hasNextPage");
	json_bool(g, 0);
	json_close(g);
	json_close(g);
	{
		size_t glen;
		const char *text = json_buf(g, &glen);

		rc = woovi_transactions_parse(text, glen, out, &more, err, errlen);
	}
	yajl_gen_free(g);
done:
	yajl_tree_free(root);
	woovi_notice_deinit(&n);
	return rc;
}

char *woovi_charge_body(const char *correlation, int64_t cents, long long expires_s,
			const char *comment)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "correlationID");
	json_str(g, correlation);
	json_str(g, "value");
	json_int(g, (long long)cents);
	if (expires_s > 0) {
		json_str(g, "expiresIn");
		json_int(g, expires_s);
	}
	if (comment && *comment) {
		json_str(g, "comment");
		json_str(g, comment);
	}
	json_close(g);
	return json_take(g);
}

char *woovi_refund_body(const char *correlation, int64_t cents)
{
	yajl_gen g = json_gen_new();

	json_open(g);
	json_str(g, "correlationID");
	json_str(g, correlation);
	json_str(g, "value");
	json_int(g, (long long)cents);
	json_close(g);
	return json_take(g);
}

int woovi_public_keys(const char *body, size_t len, char **pem, char *err, size_t errlen)
{
	yajl_val root = NULL, list;
	size_t total = 0, n = 0;
	char *out = NULL;
	int rc = -1;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	list = json_get(root, "public_keys");
	if (!YAJL_IS_ARRAY(list) || list->u.array.len == 0) {
		snprintf(err, errlen, "public_keys: must be a non-empty array");
		goto done;
	}
	out = mem_strdup("");
	for (size_t i = 0; i < list->u.array.len && n < 8; i++) {
		const char *k = YAJL_GET_STRING(json_get(list->u.array.values[i], "key"));
		char *more;

		if (!k) {
			snprintf(err, errlen, "public_keys[%zu].key: must be a string", i);
			goto done;
		}
		total += strlen(k) + 1;
		if (total > 65536) {
			snprintf(err, errlen, "public_keys: more than 64 KiB of keys");
			goto done;
		}
		more = mem_printf("%s%s\n", out, k);
		free(out);
		out = more;
		n++;
	}
	*pem = out;
	out = NULL;
	rc = 0;
done:
	free(out);
	yajl_tree_free(root);
	return rc;
}

/* ---- answers ---- */

int woovi_charge_created(const char *body, size_t len, struct woovi_created *out, char *err,
			 size_t errlen)
{
	yajl_val root = NULL, charge, corr;
	struct woovi_created c = {0};
	const char *status, *br = NULL;
	int rc = WOOVI_MALFORMED;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_object_at(root, "charge", "", &charge, err, errlen) < 0)
		goto done;
	corr = provjson_optional(charge, "correlationID") ? json_get(charge, "correlationID")
							  : json_get(root, "correlationID");
	provjson_token_copy(corr, c.correlation, WOOVI_ID_MAX);
	if (!c.correlation[0]) {
		provjson_fail(err, errlen, "charge", "correlationID",
			      "must be 1 to %d printable characters without spaces", WOOVI_ID_MAX);
		goto done;
	}
	if (cents_at(charge, "value", "charge", &c.cents, err, errlen) < 0 ||
	    provjson_status_at(charge, "charge", STATUS_MAX, &status, err, errlen) < 0)
		goto done;
	if (provjson_optional(root, "brCode")) {
		if (provjson_string_at(root, "brCode", "", true, BRCODE_MAX, &br, err, errlen) < 0)
			goto done;
	} else if (provjson_string_at(charge, "brCode", "charge", true, BRCODE_MAX, &br, err,
				      errlen) < 0) {
		goto done;
	}
	if (!*br) {
		provjson_fail(err, errlen, "charge", "brCode", "must not be empty");
		goto done;
	}
	provjson_token_copy(json_get(charge, "transactionID"), c.transaction, WOOVI_ID_MAX);
	snprintf(c.status, sizeof(c.status), "%s", status);
	c.br_code = mem_strdup(br);
	*out = c;
	rc = WOOVI_OK;
done:
	yajl_tree_free(root);
	return rc;
}

void woovi_created_deinit(struct woovi_created *c)
{
	free(c->br_code);
	memset(c, 0, sizeof(*c));
}

int woovi_refund_created(const char *body, size_t len, struct woovi_refund_created *out, char *err,
			 size_t errlen)
{
	static const struct {
		const char *name;
		enum bankpix_refund_status status;
	} statuses[] = {
	    {"IN_PROCESSING", BANKPIX_EM_PROCESSAMENTO},
	    {"CONFIRMED", BANKPIX_DEVOLVIDO},
	    {"REJECTED", BANKPIX_NAO_REALIZADO},
	};
	yajl_val root = NULL, refund;
	struct woovi_refund_created r = {0};
	const char *status;
	int rc = WOOVI_MALFORMED, st = -1;

	if (json_parse_object(body, len, &root, err, errlen) < 0)
		goto done;
	if (provjson_object_at(root, "refund", "", &refund, err, errlen) < 0 ||
	    provjson_status_at(refund, "refund", STATUS_MAX, &status, err, errlen) < 0)
		goto done;
	for (size_t i = 0; i < sizeof(statuses) / sizeof(*statuses); i++)
		if (strcmp(status, statuses[i].name) == 0)
			st = (int)statuses[i].status;
	if (st < 0) {
		provjson_fail(err, errlen, "refund", "status",
			      "must be IN_PROCESSING, CONFIRMED or REJECTED");
		goto done;
	}
	if (cents_at(refund, "value", "refund", &r.cents, err, errlen) < 0)
		goto done;
	provjson_token_copy(json_get(refund, "correlationID"), r.correlation, WOOVI_ID_MAX);
	if (!r.correlation[0]) {
		provjson_fail(err, errlen, "refund", "correlationID",
			      "must be 1 to %d printable characters without spaces", WOOVI_ID_MAX);
		goto done;
	}
	provjson_token_copy(json_get(refund, "endToEndId"), r.e2e, WOOVI_ID_MAX);
	woovi_refund_id(r.e2e, r.correlation, NULL, r.id);
	r.status = (enum bankpix_refund_status)st;
	*out = r;
	rc = WOOVI_OK;
done:
	yajl_tree_free(root);
	return rc;
}
