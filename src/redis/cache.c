/* cache: a table of CACHE_SLOTS entries, one per slot of the key's FNV-1a
 * hash (a new key takes the slot), each with its own expiry, filled by the
 * stores that read API keys (store/auth.c), accounts
 * (store/accounts_read.c) and bank connections (store/banks_view.c: an
 * object with its destructor, not a string). Every announcement its subscriber (sub.c) hears
 * bumps a generation, so a put whose read began before it is dropped;
 * losing the subscription empties the table and turns the cache off. Values
 * may hold secrets and are wiped when dropped. One watcher hears the same
 * events after the cache (cache_watch). Made by api/server.c. */
#include "pixrelay/redis/cache.h"
#include "pixrelay/core/hash.h"

#include "pixrelay/core/ids.h"
#include "pixrelay/core/log.h"
#include "pixrelay/core/mem.h"

#include <stdlib.h>
#include <string.h>

struct entry {
	char *key;
	char *value; /* a string entry */
	void *obj;   /* or an object entry, freed with obj_free */
	void (*obj_free)(void *);
	uint64_t until_ms;
};

struct cache {
	struct rds *sub;
	int listening;
	uint64_t generation; /* bumped by every announcement and change of listening */
	struct entry slots[CACHE_SLOTS];
	unsigned long long hits, misses;
	rds_message_fn watcher;
	void *watcher_ud;
};

static unsigned slot_of(const char *key)
{
	return hash_fnv1a(key, HASH_FNV1A_INIT) % CACHE_SLOTS;
}

static void entry_clear(struct entry *e)
{
	if (e->value)
		mem_wipe(e->value, strlen(e->value)); /* may hold a secret */
	if (e->obj)
		e->obj_free(e->obj);
	free(e->key);
	free(e->value);
	memset(e, 0, sizeof(*e));
}

static void clear_all(struct cache *c)
{
	for (unsigned i = 0; i < CACHE_SLOTS; i++)
		if (c->slots[i].key)
			entry_clear(&c->slots[i]);
}

static void on_announcement(void *ud, enum rds_sub_event what, const char *msg, size_t len)
{
	struct cache *c = ud;
	char key[128];

	c->generation++;
	switch (what) {
	case RDS_SUB_READY:
		c->listening = 1;
		break;
	case RDS_SUB_LOST:
		/* what is announced until we listen again is missed: hold nothing */
		c->listening = 0;
		clear_all(c);
		log_warn(
		    "cache: invalidations lost with the connection; cache off until it is back");
		break;
	case RDS_SUB_MESSAGE:
		if (len < sizeof(key)) {
			memcpy(key, msg, len);
			key[len] = '\0';
			cache_forget(c, key);
		}
		break;
	}
	if (c->watcher)
		c->watcher(c->watcher_ud, what, msg, len);
}

struct cache *cache_new(struct event_base *base, const struct rds_addr *addr, long timeout_ms,
			const char *channel)
{
	struct cache *c = mem_new(struct cache);

	c->sub = rds_new_subscriber(base, addr, timeout_ms, channel, on_announcement, c);
	return c;
}

void cache_free(struct cache *c)
{
	if (!c)
		return;
	rds_free(c->sub);
	clear_all(c);
	free(c);
}

uint64_t cache_ticket(const struct cache *c)
{
	return c ? c->generation : 0;
}

/* The live entry of `key`, counted as a hit, or NULL, counted as a miss. */
static struct entry *lookup(struct cache *c, const char *key)
{
	struct entry *e;

	if (!c)
		return NULL;
	e = &c->slots[slot_of(key)];
	if (!c->listening || !e->key || strcmp(e->key, key) != 0 || e->until_ms <= ids_now_ms()) {
		c->misses++;
		return NULL;
	}
	c->hits++;
	return e;
}

const char *cache_get(struct cache *c, const char *key)
{
	struct entry *e = lookup(c, key);

	return e ? e->value : NULL;
}

void *cache_get_obj(struct cache *c, const char *key)
{
	struct entry *e = lookup(c, key);

	return e ? e->obj : NULL;
}

void cache_put(struct cache *c, const char *key, const char *value, uint64_t ticket, long ttl_ms)
{
	struct entry *e;

	if (!c || !c->listening || ticket != c->generation || strlen(key) >= 128)
		return;
	e = &c->slots[slot_of(key)];
	entry_clear(e);
	e->key = mem_strdup(key);
	e->value = mem_strdup(value);
	e->until_ms = ids_now_ms() + (uint64_t)ttl_ms;
}

int cache_put_obj(struct cache *c, const char *key, void *obj, void (*obj_free)(void *),
		  uint64_t ticket, long ttl_ms)
{
	struct entry *e;

	if (!c || !c->listening || ticket != c->generation || strlen(key) >= 128)
		return CACHE_NOT_KEPT;
	e = &c->slots[slot_of(key)];
	entry_clear(e);
	e->key = mem_strdup(key);
	e->obj = obj;
	e->obj_free = obj_free;
	e->until_ms = ids_now_ms() + (uint64_t)ttl_ms;
	return 0;
}

void cache_forget(struct cache *c, const char *key)
{
	struct entry *e;

	if (!c)
		return;
	e = &c->slots[slot_of(key)];
	if (e->key && strcmp(e->key, key) == 0)
		entry_clear(e);
}

void cache_watch(struct cache *c, rds_message_fn fn, void *ud)
{
	if (!c)
		return;
	c->watcher = fn;
	c->watcher_ud = ud;
}

void cache_counts(const struct cache *c, unsigned long long *hits, unsigned long long *misses)
{
	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
}
