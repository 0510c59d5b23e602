/* rslot: slots of keys (the values were read from a real cluster node with
 * CLUSTER KEYSLOT), routing arguments, redirections and CLUSTER SLOTS. */
#include "pixrelay/redis/rslot.h"

#include "check.h"

#include <stdlib.h>

static int slot(const char *k)
{
	return rslot_of(k, strlen(k));
}

/* A reply read from RESP text by hiredis' own reader, as it comes off the
 * wire; the caller frees it. */
static redisReply *resp(const char *text)
{
	redisReader *rd = redisReaderCreate();
	void *reply = NULL;

	redisReaderFeed(rd, text, strlen(text));
	if (redisReaderGetReply(rd, &reply) != REDIS_OK)
		reply = NULL;
	redisReaderFree(rd);
	return reply;
}

static void test_slots_of_keys(void)
{
	CHECK_INT(slot("123456789"), 12739);
	CHECK_INT(slot("foo"), 12182);
	CHECK_INT(slot("bar"), 5061);
	CHECK_INT(slot("{user1000}.following"), 3443);
	CHECK_INT(slot("{user1000}.followers"), 3443);
	CHECK_INT(slot("foo{}{bar}"), 8363);	/* empty tag: the whole key */
	CHECK_INT(slot("foo{{bar}}zap"), 4015); /* tag "{bar" */
	CHECK_INT(slot("foo{bar}{zap}"), 5061); /* the first tag only: "bar" */
	CHECK_INT(slot("pixrelay:{s0}:ch:x"), 11097);
	CHECK_INT(slot("pixrelay:{s15}:e:y"), 4362);
	CHECK_INT(slot("pixrelay:{s1023}:x"), 2411);
	CHECK_INT(slot("pixrelay:{sandbox}:accounts"), 4748);
	CHECK_INT(slot("pixrelay:{keys}:all"), 2915);
	CHECK_INT(slot("pixrelay:deliveries"), 5324);
	CHECK_INT(slot("{"), 4092);
	CHECK_INT(slot("}"), 12090);
	CHECK_INT(slot("{}"), 15257);
	CHECK_INT(slot(""), 0);
	/* binary keys: the length counts, not the NUL */
	CHECK_INT(rslot_of("foo\0bar", 3), 12182);
	{
		const char *part;
		size_t n;
		rslot_hashed_part("a{s7}:b", 7, &part, &n);
		CHECK_INT(n, 2);
		CHECK(memcmp(part, "s7", 2) == 0);
		rslot_hashed_part("nothing", 7, &part, &n);
		CHECK_INT(n, 7);
	}
}

static int key_index(int argc, const char **argv)
{
	return rslot_key_index(argc, argv, NULL);
}

static void test_key_index(void)
{
	const char *get[] = {"GET", "k"};
	const char *hget[] = {"hget", "k", "f"};
	const char *evalsha[] = {"EVALSHA", "abc", "2", "k1", "k2", "a"};
	const char *evalsha0[] = {"EVALSHA", "abc", "0", "a"};
	const char *eval10[] = {"eval", "body", "10", "k1"};
	const char *publish[] = {"PUBLISH", "chan", "msg"};
	const char *numsub[] = {"PUBSUB", "NUMSUB", "chan"};
	const char *channels[] = {"PUBSUB", "CHANNELS"};
	const char *ping[] = {"PING"};
	const char *script[] = {"SCRIPT", "LOAD", "return 1"};
	const char *cluster[] = {"CLUSTER", "SLOTS"};
	const char *wait[] = {"WAIT", "1", "100"};
	const char *lone[] = {"DBSIZE"};

	CHECK_INT(key_index(2, get), 1);
	CHECK_INT(key_index(3, hget), 1);
	CHECK_INT(key_index(6, evalsha), 3);
	CHECK_INT(key_index(4, evalsha0), -1);
	CHECK_INT(key_index(4, eval10), 3);
	CHECK_INT(key_index(3, publish), 1);
	CHECK_INT(key_index(3, numsub), 2);
	CHECK_INT(key_index(2, channels), -1);
	CHECK_INT(key_index(1, ping), -1);
	CHECK_INT(key_index(3, script), -1);
	CHECK_INT(key_index(2, cluster), -1);
	CHECK_INT(key_index(3, wait), -1);
	CHECK_INT(key_index(1, lone), -1);
	CHECK_INT(key_index(0, NULL), -1);
	{
		const char *bin[] = {"GETX", "k"};
		size_t lens[] = {3, 1}; /* "GET" with a length */
		CHECK_INT(rslot_key_index(2, bin, lens), 1);
	}
}

static void test_errors(void)
{
	char host[64];
	int s = -1, port = -1;

#define PARSE(text) rslot_parse_error((text), strlen(text), &s, host, sizeof(host), &port)
	CHECK_INT(PARSE("MOVED 3999 127.0.0.1:6381"), RSLOT_ERR_MOVED);
	CHECK_INT(s, 3999);
	CHECK_STR(host, "127.0.0.1");
	CHECK_INT(port, 6381);
	CHECK_INT(PARSE("ASK 16383 ::1:7002"), RSLOT_ERR_ASK);
	CHECK_INT(s, 16383);
	CHECK_STR(host, "::1");
	CHECK_INT(port, 7002);
	CHECK_INT(PARSE("MOVED 0 redis-3.internal:6379"), RSLOT_ERR_MOVED);
	CHECK_STR(host, "redis-3.internal");
	s = port = -1;
	CHECK_INT(PARSE("MOVED 16384 127.0.0.1:6381"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("MOVED 12 127.0.0.1:0"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("MOVED 12 127.0.0.1:65536"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("MOVED 12 127.0.0.1"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("MOVED 12 :7000"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("MOVED x 127.0.0.1:7000"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("MOVED"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("MOVEDX 1 h:1"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("ASK 1 h:1x"), RSLOT_ERR_OTHER);
	CHECK_INT(s, -1); /* nothing written for a malformed one */
	CHECK_INT(port, -1);
	{
		char small[4];
		CHECK_INT(
		    rslot_parse_error("MOVED 1 longhost:1", 18, &s, small, sizeof(small), &port),
		    RSLOT_ERR_OTHER);
	}
	CHECK_INT(PARSE("TRYAGAIN Multiple keys request during rehashing of slot"),
		  RSLOT_ERR_RETRY);
	CHECK_INT(PARSE("CLUSTERDOWN The cluster is down"), RSLOT_ERR_RETRY);
	CHECK_INT(PARSE("LOADING Redis is loading the dataset in memory"), RSLOT_ERR_RETRY);
	CHECK_INT(PARSE("MASTERDOWN Link with MASTER is down"), RSLOT_ERR_RETRY);
	CHECK_INT(PARSE("READONLY You can't write against a read only replica."),
		  RSLOT_ERR_READONLY);
	CHECK_INT(PARSE("NOSCRIPT No matching script. Please use EVAL."), RSLOT_ERR_NOSCRIPT);
	CHECK_INT(PARSE("ERR wrong number of arguments"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE("CROSSSLOT Keys in request don't hash to the same slot"), RSLOT_ERR_OTHER);
	CHECK_INT(PARSE(""), RSLOT_ERR_OTHER);
#undef PARSE
}

static void test_cluster_slots(void)
{
	/* three primaries with a replica each, one of them announced without
	 * an address; Redis 7 adds a node id and a map of metadata */
	redisReply *r = resp("*3\r\n"
			     "*4\r\n:0\r\n:5460\r\n"
			     "*4\r\n$9\r\n127.0.0.1\r\n:7000\r\n$3\r\nid0\r\n*0\r\n"
			     "*3\r\n$9\r\n127.0.0.1\r\n:7004\r\n$3\r\nid4\r\n"
			     "*3\r\n:5461\r\n:10922\r\n"
			     "*3\r\n$0\r\n\r\n:7001\r\n$3\r\nid1\r\n"
			     "*3\r\n:10923\r\n:16383\r\n"
			     "*2\r\n$11\r\nredis-c.lan\r\n:7002\r\n");
	struct rslot_range *rg = NULL;
	int n;

	CHECK(r != NULL);
	n = rslot_parse_slots(r, "10.0.0.9", &rg);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_INT(rg[0].start, 0);
		CHECK_INT(rg[0].end, 5460);
		CHECK_INT(rg[0].hostlen, 9);
		CHECK(memcmp(rg[0].host, "127.0.0.1", 9) == 0);
		CHECK_INT(rg[0].port, 7000);
		CHECK_INT(rg[1].start, 5461);
		CHECK_STR(rg[1].host, "10.0.0.9"); /* the fallback */
		CHECK_INT(rg[1].port, 7001);
		CHECK_INT(rg[2].end, 16383);
		CHECK(memcmp(rg[2].host, "redis-c.lan", 11) == 0);
	}
	free(rg);
	freeReplyObject(r);

	/* an empty map (a node without slots yet) */
	r = resp("*0\r\n");
	rg = NULL;
	CHECK_INT(rslot_parse_slots(r, NULL, &rg), 0);
	free(rg);
	freeReplyObject(r);

	/* malformed: each is refused as a whole */
	{
		static const char *const bad[] = {
		    "-ERR This instance has cluster support disabled\r\n",
		    "*1\r\n:5\r\n",
		    "*1\r\n*2\r\n:0\r\n:1\r\n",
		    "*1\r\n*3\r\n:10\r\n:9\r\n*2\r\n$1\r\nh\r\n:1\r\n",
		    "*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n",
		    "*1\r\n*3\r\n:-1\r\n:5\r\n*2\r\n$1\r\nh\r\n:1\r\n",
		    "*1\r\n*3\r\n:0\r\n:5\r\n*2\r\n$1\r\nh\r\n:0\r\n",
		    "*1\r\n*3\r\n:0\r\n:5\r\n*2\r\n$1\r\nh\r\n$4\r\n7000\r\n",
		    "*1\r\n*3\r\n:0\r\n:5\r\n*1\r\n$1\r\nh\r\n",
		    "*1\r\n*3\r\n:0\r\n:5\r\n*2\r\n$1\r\n?\r\n:7000\r\n", /* no fallback */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			r = resp(bad[i]);
			rg = (struct rslot_range *)&n; /* must stay untouched */
			CHECK(r != NULL);
			CHECK_INT(rslot_parse_slots(r, NULL, &rg), -1);
			CHECK(rg == (struct rslot_range *)&n);
			freeReplyObject(r);
		}
	}
	CHECK_INT(rslot_parse_slots(NULL, NULL, &rg), -1);
}

int main(void)
{
	test_slots_of_keys();
	test_key_index();
	test_errors();
	test_cluster_slots();
	return check_finish("rslot");
}
