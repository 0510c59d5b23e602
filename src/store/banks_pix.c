/* banks_pix: bank_pix's arguments appended in the order its header (and
 * banks_pix.h) gives them, and its answer read back field by field into
 * struct banks_pix_heard, anything else refused. The call itself, and what
 * is done with the answer, are banks_receive.c's. No I/O.
 */
#include "pixrelay/store/banks_pix.h"

#include <stdio.h>
#include <string.h>

void banks_pix_args(struct rargs *a, const struct banks_pix_call *c)
{
	rargs_str(a, c->key);
	rargs_str(a, c->shard_prefix);
	rargs_ll(a, c->now_ms);
	rargs_str(a, c->now_text);
	rargs_ll(a, c->retention_s);
	rargs_ll(a, c->npix);
	rargs_ll(a, c->nrefused);
}

static void who_args(struct rargs *a, const struct banks_pix_who *w)
{
	rargs_str(a, w->conn);
	rargs_str(a, w->account);
	rargs_str(a, w->env);
	rargs_str(a, w->source);
	rargs_str(a, w->day);
}

void banks_pix_args_pix(struct rargs *a, const struct banks_pix_who *w,
			const struct banks_pix_item *it)
{
	const struct bankpix *p = it->pix;

	who_args(a, w);
	/* what makes the Pix once: a provider's payment id, or the endToEndId */
	rargs_str(a, p->id[0] ? p->id : p->e2e);
	rargs_str(a, p->txid);
	rargs_str(a, it->charge);
	rargs_ll(a, (long long)p->cents);
	rargs_ll(a, p->horario_ms);
	rargs_str(a, p->json);
	rargs_str(a, it->keep);
	rargs_str(a, it->event);
	rargs_ll(a, it->refunded);
	rargs_ll(a, (long long)p->nrefunds);
	/* componentesValor: '' none, '-' not adding up, else its original */
	if (p->parts == BANKPIX_PARTS_ADD_UP)
		rargs_ll(a, (long long)p->parts_original);
	else
		rargs_str(a, p->parts == BANKPIX_PARTS_NONE ? "" : "-");
	for (size_t j = 0; j < p->nrefunds; j++) {
		const struct bankpix_refund *f = &p->refunds[j];

		rargs_str(a, f->id);
		rargs_str(a, bankpix_refund_status_name(f->status));
		rargs_ll(a, (long long)f->cents);
		rargs_str(a, it->refund_events[j][0]);
		rargs_str(a, f->json);
		rargs_str(a, f->natureza);
		rargs_str(a, f->med ? "1" : "0");
		rargs_str(a, it->refund_events[j][1]);
	}
}

void banks_pix_args_refusal(struct rargs *a, const struct banks_pix_who *w,
			    const struct bankpix_refusal *f, const char *event)
{
	who_args(a, w);
	rargs_ll(a, (long long)f->index);
	rargs_str(a, f->id);
	rargs_str(a, f->e2e);
	if (f->cents >= 0)
		rargs_ll(a, (long long)f->cents);
	else
		rargs_str(a, "");
	rargs_str(a, event);
	rargs_str(a, f->reasons);
	rargs_str(a, f->item);
}

static const char *const outcome_names[] = {"paid", "unmatched", "duplicate", "refused"};

const char *banks_pix_outcome_name(enum banks_pix_outcome o)
{
	return (unsigned)o < sizeof(outcome_names) / sizeof(*outcome_names) ? outcome_names[o]
									    : "?";
}

/* Whether answer field e is a string of fewer than `size` bytes made of
 * letters, digits and '_' only ("" included). */
static int word(const redisReply *e, size_t size)
{
	if (e->type != REDIS_REPLY_STRING || e->len >= size || strlen(e->str) != e->len)
		return 0;
	for (size_t i = 0; i < e->len; i++) {
		char ch = e->str[i];

		if (!(ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9')))
			return 0;
	}
	return 1;
}

/* The index of field e among `names` (n of them), or -1. */
static int one_of(const redisReply *e, const char *const *names, int n)
{
	if (e->type != REDIS_REPLY_STRING)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(e->str, names[i]) == 0)
			return i;
	return -1;
}

size_t banks_pix_fields(size_t nrefunds)
{
	return BANKS_PIX_FIELDS + BANKS_PIX_REFUND_FIELDS * nrefunds;
}

int banks_pix_decode(redisReply *const *f, size_t n, size_t nrefunds, struct banks_pix_heard *out)
{
	static const char *const refund_outcomes[] = {"refunded", "included",  "reported",
						      "med",	  "duplicate", "elsewhere"};
	int o;

	if (n < BANKS_PIX_FIELDS || nrefunds > (n - BANKS_PIX_FIELDS) / BANKS_PIX_REFUND_FIELDS)
		return -1;
	o = one_of(f[0], outcome_names, 3);
	if (o < 0 || !word(f[1], sizeof(out->reason)) || !word(f[2], sizeof(out->event)) ||
	    !word(f[3], sizeof(out->charge)) || !word(f[4], sizeof(out->held_by)))
		return -1;
	for (size_t j = 0; j < nrefunds; j++) {
		redisReply *const *r = f + BANKS_PIX_FIELDS + BANKS_PIX_REFUND_FIELDS * j;

		if (one_of(r[0], refund_outcomes, 6) < 0 || !word(r[1], EVENT_ID_MAX) ||
		    !word(r[2], EVENT_ID_MAX))
			return -1;
	}
	out->outcome = (enum banks_pix_outcome)o;
	memcpy(out->reason, f[1]->str, f[1]->len + 1);
	memcpy(out->event, f[2]->str, f[2]->len + 1);
	memcpy(out->charge, f[3]->str, f[3]->len + 1);
	memcpy(out->held_by, f[4]->str, f[4]->len + 1);
	return 0;
}

int banks_pix_decode_refusal(redisReply *const *f, size_t n, struct banks_pix_heard *out)
{
	static const char *const outcomes[] = {"refused", "duplicate"};
	int o;

	if (n < BANKS_PIX_REFUSAL_FIELDS)
		return -1;
	o = one_of(f[0], outcomes, 2);
	if (o < 0 || !word(f[1], sizeof(out->event)))
		return -1;
	memset(out, 0, sizeof(*out));
	out->outcome = o == 0 ? BANKS_PIX_REFUSED : BANKS_PIX_DUPLICATE;
	memcpy(out->event, f[1]->str, f[1]->len + 1);
	return 0;
}
