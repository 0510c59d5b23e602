/* cli_trigger_rec: `pixrelay trigger rec.approved|rec.rejected|rec.cancelled`
 * (docs/recurrences.md): a recurrence of the account (--recurrence, else its
 * newest) read through the API, then the bank's standard /rec callback of
 * that status sent through the bank receiver's own path (simulate-pix of
 * the recurrence's sandbox connection, which reads the body's top key), so
 * that its one event reaches the postbackUrl and every `pixrelay listen`.
 * The rest of `trigger` is cli_trigger.c. */
#include "cli_int.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/json.h"
#include "pixrelay/core/mem.h"
#include "pixrelay/core/timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The standard's status of each trigger and how the bank closes it. */
static const struct {
	const char *what, *status, *closing, *event;
} kinds[] = {
    {"approved", "APROVADA", NULL, "EVENT:RECURRENCE_APPROVED"},
    {"rejected", "REJEITADA",
     "\"rejeicao\":{\"codigo\":\"AP13\",\"descricao\":\"pixrelay trigger: rejected\"}",
     "EVENT:RECURRENCE_REJECTED"},
    {"cancelled", "CANCELADA",
     "\"cancelamento\":{\"solicitante\":\"USUARIO_PAGADOR\",\"codigo\":\"ACCL\","
     "\"descricao\":\"pixrelay trigger: cancelled\"}",
     "EVENT:RECURRENCE_CANCELLED"},
};

int cli_trigger_rec(const struct config *cfg, const struct cli_args *a, const char *key,
		    const char *what, const char *id)
{
	char base[512], at[32], rec[64] = "", idrec[40] = "", conn[64] = "";
	char *path = NULL, *body = NULL;
	yajl_val data = NULL, one, list;
	const char *outcome = NULL;
	int k = -1, rc = 1;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(what, kinds[i].what) == 0)
			k = (int)i;
	if (k < 0) {
		fprintf(stderr,
			"pixrelay trigger: unknown event 'rec.%s': rec.approved, rec.rejected "
			"or rec.cancelled\n",
			what);
		return 2;
	}
	cli_base_url(cfg, base, sizeof(base));
	path = id ? mem_printf("/recurrences/%s", id) : mem_strdup("/recurrences?limit=1");
	if (cli_trigger_step(base, key, a->account, "GET", path, NULL, NULL, &data) < 0)
		goto done;
	list = json_get(data, "recurrences");
	one =
	    id ? data : (YAJL_IS_ARRAY(list) && list->u.array.len ? list->u.array.values[0] : NULL);
	if (!one || !YAJL_GET_STRING(json_get(one, "idRec")) ||
	    !YAJL_GET_STRING(json_get(one, "connection"))) {
		fprintf(stderr, "pixrelay trigger: the account has no recurrence: create one first "
				"(POST /v1/recurrences, docs/recurrences.md)\n");
		goto done;
	}
	snprintf(rec, sizeof(rec), "%s", YAJL_GET_STRING(json_get(one, "id")));
	snprintf(idrec, sizeof(idrec), "%s", YAJL_GET_STRING(json_get(one, "idRec")));
	snprintf(conn, sizeof(conn), "%s", YAJL_GET_STRING(json_get(one, "connection")));
	yajl_tree_free(data);
	data = NULL;
	timefmt_rfc3339(at, ids_now_ms());
	body = mem_printf("{\"recs\":[{\"idRec\":\"%s\",\"status\":\"%s\",\"atualizacao\":"
			  "[{\"status\":\"%s\",\"data\":\"%s\"}]%s%s%s}]}",
			  idrec, kinds[k].status, kinds[k].status, at,
			  kinds[k].closing ? ",\"encerramento\":{" : "",
			  kinds[k].closing ? kinds[k].closing : "", kinds[k].closing ? "}" : "");
	free(path);
	path = mem_printf("/bank/connections/%s/simulate-pix", conn);
	if (cli_trigger_step(base, key, a->account, "POST", path, body, NULL, &data) < 0)
		goto done;
	list = json_get(data, "recs");
	one = YAJL_IS_ARRAY(list) && list->u.array.len == 1 ? list->u.array.values[0] : NULL;
	outcome = one ? YAJL_GET_STRING(json_get(one, "outcome")) : NULL;
	if (a->json)
		printf("{\"recurrence\":\"%s\",\"idRec\":\"%s\",\"connection\":\"%s\",\"outcome\":"
		       "\"%s\",\"event\":%s%s%s}\n",
		       rec, idrec, conn, outcome ? outcome : "?",
		       outcome && strcmp(outcome, "taken") == 0 ? "\"" : "",
		       outcome && strcmp(outcome, "taken") == 0 ? kinds[k].event : "null",
		       outcome && strcmp(outcome, "taken") == 0 ? "\"" : "");
	else if (outcome && strcmp(outcome, "taken") == 0)
		printf("recurrence %s (%s) through %s: %s\nevent %s\n", rec, idrec, conn,
		       kinds[k].status, kinds[k].event);
	else
		printf("recurrence %s (%s) through %s: %s, no event (a recurrence only moves "
		       "forward: it was there already, or past it)\n",
		       rec, idrec, conn, outcome ? outcome : "?");
	rc = 0;
done:
	yajl_tree_free(data);
	free(path);
	free(body);
	return rc;
}
