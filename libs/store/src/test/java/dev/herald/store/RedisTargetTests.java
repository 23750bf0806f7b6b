package dev.herald.store;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The suite runs on the Redis it was told of: with -Dherald.test.redis=cluster, a three-master cluster. */
class RedisTargetTests {

    @Test
    void theSuiteRunsOnASingleRedisOrOnAThreeMasterCluster() {
        try (TestRedis redis = new TestRedis()) {
            String server = redis.sync().info("server");
            if (TestRedis.CLUSTER) {
                assertThat(server).contains("redis_mode:cluster");
                String cluster = redis.sync().clusterInfo();
                assertThat(cluster).contains("cluster_state:ok").contains("cluster_size:3");
            } else {
                assertThat(server).contains("redis_mode:standalone");
            }
        }
    }
}
