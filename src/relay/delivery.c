/* delivery: one postback in flight, from the slot it takes at its host to
 * what its end means: its request (post.c: the headers, Standard Webhooks
 * signatures, the address checks that keep production postbacks on public
 * addresses), the verdict of an attempt (dispatch_judge), what it teaches
 * the host's budget, and when to try again (backoff). Leasing, queueing
 * outcomes and settling them are dispatch.c's; the curl multi handle on
 * libevent is curlev.c's; the budgets are budget.c's.
 */
#include "dispatch_int.h"

#include "pixrelay/core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum dispatch_verdict dispatch_judge(long http_status, int curl_ok)
{
	if (!curl_ok || http_status == 0)
		return DISPATCH_RETRY;
	if (http_status >= 200 && http_status < 300)
		return DISPATCH_OK;
	if (http_status == 410)
		return DISPATCH_STOP;
	return DISPATCH_RETRY;
}

enum env delivery_env(const struct delivery *dl)
{
	return strcmp(dl->env, "production") == 0 ? ENV_PRODUCTION : ENV_SANDBOX;
}

void delivery_free(struct delivery *dl)
{
	if (dl->easy)
		curlev_release(dl->pool, dl->easy);
	post_deinit(&dl->post);
	free(dl->url);
	free(dl->body);
	free(dl->account);
	free(dl->order);
	free(dl->queue);
	free(dl->headers);
	if (dl->signing)
		mem_wipe(dl->signing, strlen(dl->signing));
	if (dl->signing_prev)
		mem_wipe(dl->signing_prev, strlen(dl->signing_prev));
	if (dl->compat)
		mem_wipe(dl->compat, strlen(dl->compat));
	free(dl->signing);
	free(dl->signing_prev);
	free(dl->compat);
	free(dl);
}

void delivery_start_waiting(struct budget_host *h)
{
	struct delivery *dl = h->waiting;

	if (!dl || !budget_host_may_start(h))
		return;
	h->waiting = dl->next_waiting;
	if (!h->waiting)
		h->waiting_tail = NULL;
	h->nwaiting--;
	dl->next_waiting = NULL;
	delivery_start(dl);
}

static void finish(struct delivery *dl, CURLcode result)
{
	struct dispatch *d = dl->d;
	struct budget_host *h = dl->host;
	long status = 0;
	char error[512] = "";
	long long next_ms = 0;
	uint32_t rnd;
	uint64_t now = ids_now_ms();

	curl_easy_getinfo(dl->easy, CURLINFO_RESPONSE_CODE, &status);
	post_error(&dl->post, result, status, error, sizeof(error));

	/* a refused address says nothing about the host; an answer in time is
	 * healthy unless it asks to slow down (429, 5xx: the limit halves, as on
	 * a failed connection); only a timeout, which held a slot for long,
	 * counts towards opening the circuit */
	budget_done(&d->budget, h, dl->tenant, delivery_env(dl));
	if (dl->post.refused_address)
		budget_learn(&d->budget, h, BUDGET_FINE, 1, now);
	else if (result == CURLE_OPERATION_TIMEDOUT)
		budget_learn(&d->budget, h, BUDGET_UNREACHABLE, 0, now);
	else if (result != CURLE_OK)
		budget_learn(&d->budget, h, BUDGET_STRAINED, 0, now);
	else if (status == 429 || status >= 500)
		budget_learn(&d->budget, h, BUDGET_STRAINED, 0, now);
	else
		budget_learn(&d->budget, h, BUDGET_FINE, now - dl->start_ms < BUDGET_SLOW_MS, now);

	switch (dispatch_judge(status, result == CURLE_OK)) {
	case DISPATCH_OK:
		dispatch_complete(dl, "delivered", 0, status, NULL);
		break;
	case DISPATCH_STOP:
		/* an endpoint that asks to stop is disabled (event_settle.lua): its
		 * delivery is kept for when it is enabled again; a postbackUrl's is
		 * dead */
		if (dl->endpoint[0])
			dispatch_complete(dl, "retry", (long long)now, status,
					  "410 Gone: the endpoint asked to stop; it is disabled");
		else
			dispatch_complete(dl, "dead", 0, status,
					  "410 Gone: the destination asked to stop");
		break;
	case DISPATCH_RETRY:
		ids_random(&rnd, sizeof(rnd));
		if (backoff_next(&d->policy, dl->attempts - dl->budget_base, dl->created_ms,
				 (long long)now,
				 (status == 429 || status == 503) ? dl->post.retry_after_ms : -1,
				 rnd, &next_ms) == BACKOFF_RETRY)
			dispatch_complete(dl, "retry", next_ms, status, error);
		else
			dispatch_complete(dl, "dead", 0, status, error);
		break;
	}
	delivery_start_waiting(h);
}

static void active_add(struct delivery *dl)
{
	struct dispatch *d = dl->d;

	dl->prev_active = NULL;
	dl->next_active = d->active;
	if (d->active)
		d->active->prev_active = dl;
	d->active = dl;
}

static void active_remove(struct delivery *dl)
{
	struct dispatch *d = dl->d;

	if (dl->prev_active)
		dl->prev_active->next_active = dl->next_active;
	else if (d->active == dl)
		d->active = dl->next_active;
	if (dl->next_active)
		dl->next_active->prev_active = dl->prev_active;
	dl->prev_active = dl->next_active = NULL;
}

void delivery_abandon(struct delivery *dl)
{
	curlev_remove(dl->pool, dl->easy);
	active_remove(dl);
	delivery_free(dl);
}

void delivery_done(void *ud, CURL *easy, CURLcode result)
{
	struct delivery *dl = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&dl);
	active_remove(dl);
	finish(dl, result);
}

void delivery_start(struct delivery *dl)
{
	struct dispatch *d = dl->d;
	char id[EVENT_ID_MAX];
	struct post_msg m = {dl->url,	       id,	   dl->body,   dl->signing,
			     dl->signing_prev, dl->compat, dl->headers};

	budget_host_started(dl->host);
	dl->start_ms = ids_now_ms();
	/* webhook-id is the event's id, also for a delivery to an endpoint
	 * ("<event id>/<endpoint id>") */
	snprintf(id, sizeof(id), "%.*s", (int)strcspn(dl->id, "/"), dl->id);
	dl->pool = d->pools[delivery_env(dl)];
	dl->easy = curlev_easy(dl->pool);
	dl->post.env = delivery_env(dl);
	dl->post.allow = &d->allow;
	post_setup(&dl->post, dl->easy, d->cfg, &m);
	curl_easy_setopt(dl->easy, CURLOPT_PRIVATE, dl);
	if (curlev_add(dl->pool, dl->easy) < 0) {
		struct budget_host *h = dl->host;
		budget_host_unstarted(h);
		dispatch_complete(dl, "retry", (long long)ids_now_ms() + d->cfg->retry_base_ms, 0,
				  "cannot start the request");
		delivery_start_waiting(h);
		return;
	}
	active_add(dl);
}
