#include "pixrelay/redis.h"

#include "check.h"

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
	return check_finish("redis_addr");
}
