package dev.herald.testsupport;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A RabbitMQ cluster of real nodes ({@link LocalRabbit}) on loopback ports, sharing an Erlang
 * cookie, the second and later joined to the first. Quorum queues declared on it get a member on
 * every node, so one node can be killed and the others keep the queues.
 */
public final class LocalRabbitCluster {
    private final List<LocalRabbit> nodes;

    private LocalRabbitCluster(List<LocalRabbit> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    public static LocalRabbitCluster start(int size) {
        byte[] secret = new byte[20];
        new SecureRandom().nextBytes(secret);
        String cookie = HexFormat.of().formatHex(secret).toUpperCase();
        List<LocalRabbit> nodes = new ArrayList<>();
        // Started side by side (each boots for seconds), joined one after the other.
        List<Thread> starting = new ArrayList<>();
        LocalRabbit[] started = new LocalRabbit[size];
        RuntimeException[] failed = new RuntimeException[1];
        for (int i = 0; i < size; i++) {
            int index = i;
            starting.add(Thread.ofPlatform().start(() -> {
                try {
                    started[index] = LocalRabbit.start(cookie);
                } catch (RuntimeException e) {
                    failed[0] = e;
                }
            }));
        }
        for (Thread thread : starting) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        if (failed[0] != null) {
            throw failed[0];
        }
        nodes.addAll(List.of(started));
        LocalRabbit first = nodes.getFirst();
        for (LocalRabbit node : nodes.subList(1, nodes.size())) {
            node.ctl("stop_app");
            node.ctl("join_cluster", first.node());
            node.ctl("start_app");
        }
        String status = first.ctl("cluster_status", "--formatter", "json");
        for (LocalRabbit node : nodes) {
            if (!status.contains(node.node())) {
                throw new IllegalStateException(node.node() + " did not join the cluster: " + status);
            }
        }
        return new LocalRabbitCluster(nodes);
    }

    public List<LocalRabbit> nodes() {
        return nodes;
    }

    /** Spring's {@code spring.rabbitmq.addresses}: every node, the client picks one and fails over. */
    public String addresses() {
        return nodes.stream().map(node -> node.host() + ":" + node.port()).collect(Collectors.joining(","));
    }

    public void stop() {
        nodes.forEach(LocalRabbit::stop);
    }
}
