#include "pixrelay/redis/redis.h"

#include "check.h"

#include <string.h>

int main(void)
{
	struct rds_addr a;

	CHECK_INT(rds_parse_addr("/tmp/r.sock", &a), 0);
	CHECK_STR(a.path, "/tmp/r.sock");
	CHECK_INT(a.db, 0);
	CHECK_INT(rds_parse_addr("unix:///var/run/redis.sock?db=3", &a), 0);
	CHECK_STR(a.path, "/var/run/redis.sock");
	CHECK_INT(a.db, 3);
	CHECK_INT(rds_parse_addr("redis://10.0.0.5", &a), 0);
	CHECK_STR(a.host, "10.0.0.5");
	CHECK_INT(a.port, 6379);
	CHECK_INT(rds_parse_addr("redis://:s3cret@cache.internal:6380/2", &a), 0);
	CHECK_STR(a.host, "cache.internal");
	CHECK_STR(a.password, "s3cret");
	CHECK_INT(a.port, 6380);
	CHECK_INT(a.db, 2);
	CHECK_INT(rds_parse_addr("redis://user:pw@h:1/", &a), 0);
	CHECK_STR(a.password, "pw");
	CHECK_INT(a.db, 0);
	CHECK_INT(rds_parse_addr("redis://h:0", &a), -1);
	CHECK_INT(rds_parse_addr("redis://h:abc", &a), -1);
	CHECK_INT(rds_parse_addr("redis://h/x", &a), -1);
	CHECK_INT(rds_parse_addr("redis://", &a), -1);
	CHECK_INT(rds_parse_addr("unix://relative", &a), -1);
	CHECK_INT(rds_parse_addr("http://h", &a), -1);
	CHECK_INT(rds_parse_addr("relative/path", &a), -1);
	CHECK_INT(rds_parse_addr("redis://h:70000", &a), -1);
	CHECK_INT(rds_parse_addr("redis://h:", &a), -1);

	/* Sentinel: the sentinels, the master's name, its password and db */
	CHECK_INT(rds_parse_addr("redis-sentinel://10.0.0.1,10.0.0.2:5000,s3/pixmaster", &a), 0);
	CHECK_INT(a.nsentinels, 3);
	CHECK_STR(a.sentinels[0].host, "10.0.0.1");
	CHECK_INT(a.sentinels[0].port, 26379);
	CHECK_STR(a.sentinels[1].host, "10.0.0.2");
	CHECK_INT(a.sentinels[1].port, 5000);
	CHECK_STR(a.sentinels[2].host, "s3");
	CHECK_STR(a.master, "pixmaster");
	CHECK_INT(a.db, 0);
	CHECK_STR(a.host, "");
	CHECK_INT(rds_parse_addr("redis-sentinel://:pw@127.0.0.1:26380/m/4", &a), 0);
	CHECK_INT(a.nsentinels, 1);
	CHECK_STR(a.password, "pw");
	CHECK_STR(a.master, "m");
	CHECK_INT(a.db, 4);
	CHECK_INT(rds_parse_addr("redis-sentinel://h1,h2", &a), -1); /* no master */
	CHECK_INT(rds_parse_addr("redis-sentinel://h1/", &a), -1);   /* empty name */
	CHECK_INT(rds_parse_addr("redis-sentinel://h1,/m", &a), -1); /* empty host */
	CHECK_INT(rds_parse_addr("redis-sentinel://,h1/m", &a), -1);
	CHECK_INT(rds_parse_addr("redis-sentinel:///m", &a), -1);
	CHECK_INT(rds_parse_addr("redis-sentinel://h1:0/m", &a), -1);
	CHECK_INT(rds_parse_addr("redis-sentinel://h1/m/x", &a), -1);
	CHECK_INT(rds_parse_addr("redis-sentinel://h1/m/", &a), -1);
	CHECK_INT(rds_parse_addr("redis-sentinel://a,b,c,d,e,f,g,h,i/m", &a), -1); /* 9 > 8 */
	CHECK_INT(rds_parse_addr("redis-sentinel://a,b,c,d,e,f,g,h/m", &a), 0);
	CHECK_INT(a.nsentinels, 8);

	/* redis-sentinel-password: up to 255 bytes kept whole; a longer one is
	 * refused (the caller says so and does not start), never cut */
	{
		char pw[300];
		memset(pw, 'p', sizeof(pw) - 1);
		pw[sizeof(pw) - 1] = '\0';
		pw[255] = '\0';
		CHECK_INT(rds_addr_set_sentinel_password(&a, pw), 0);
		CHECK_STR(a.sentinel_password, pw);
		char longer[300];
		memset(longer, 'q', 256);
		longer[256] = '\0';
		CHECK_INT(rds_addr_set_sentinel_password(&a, longer), -1);
		CHECK_STR(a.sentinel_password, pw); /* the last one kept, not a prefix */
		CHECK_INT(rds_addr_set_sentinel_password(&a, ""), 0);
		CHECK_STR(a.sentinel_password, "");
	}
	return check_finish("redis_addr");
}
