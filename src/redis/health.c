/* health.c: what a client can tell about the Redis it serves from, for
 * /readyz, /metrics and the API: whether any of it is served (rds_serving:
 * requests go on while one primary of a cluster is missing) and how much of
 * the keyspace (rds_slots_served). Whether the client is ready at all is
 * redis.c (rds_ready); failing the commands of a missing primary at once,
 * redis.c's routing. */
#include "redis_int.h"

#include "pixrelay/redis/rslot.h"

int rds_node_is_primary(const struct node *n)
{
	const struct rds *r = n->r;

	if (n->role != ROLE_DATA || r->channel)
		return 0;
	if (r->mode == MODE_CLUSTER)
		return n->in_map > 0;
	return (r->mode == MODE_SINGLE || r->mode == MODE_SENTINEL) && n == r->data;
}

int rds_serving(const struct rds *r)
{
	if (r->ready)
		return 1;
	if (r->channel || r->mode != MODE_CLUSTER)
		return 0;
	for (const struct node *n = r->nodes; n; n = n->next)
		if (n->ready && rds_node_is_primary(n))
			return 1;
	return 0;
}

int rds_slots_served(const struct rds *r)
{
	int served = 0;

	if (r->channel)
		return 0;
	if (r->mode != MODE_CLUSTER)
		return r->mode != MODE_DETECT && r->data && r->data->ready ? RSLOT_COUNT : 0;
	for (int s = 0; s < RSLOT_COUNT; s++)
		served += r->slots[s] && r->slots[s]->ready;
	return served;
}
