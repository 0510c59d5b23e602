/* store: what the domain stores of this floor share.
 *
 * Each store (keys, charges, events, accounts, transfers, review, banks,
 * ingest) answers its asynchronous calls through one kind of callback: a
 * result, the JSON the caller shows, or why it failed.
 */
#ifndef PIXRELAY_STORE_H
#define PIXRELAY_STORE_H

/* The answer to a store call, run exactly once: result 0 with json, one of
 * the store's named positive outcomes (json as that function says, maybe
 * NULL), or -1 with err (storage out of reach or a reply it did not expect;
 * json NULL). json and err are borrowed for the call. */
typedef void (*store_fn)(void *ud, int result, const char *json, const char *err);

#endif
