package dev.herald.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace the test makes (it runs as root), joined to the host by a veth pair on a
 * /30 of its own: a server started inside ({@link #command}) is reached at {@link #address()}, and
 * a firewall rule inside the namespace ({@link #cutOff}) drops every packet to a port, as a network
 * partition would: connections are not reset, packets are just lost until {@link #reconnect}.
 * {@link #close()} deletes the namespace and its link.
 */
public final class NetworkNamespace implements AutoCloseable {
    private final String name;
    private final String hostAddress;
    private final String address;

    private NetworkNamespace(String name, String hostAddress, String address) {
        this.name = name;
        this.hostAddress = hostAddress;
        this.address = address;
    }

    public static NetworkNamespace create(String prefix) {
        int id = ThreadLocalRandom.current().nextInt(1 << 14);
        String name = prefix + "-" + id;
        // 10.250.0.0/16 in /30s: one per namespace, away from the real node's bridge (10.244.0.0/24).
        int base = id * 4;
        String host = "10.250." + (base >> 8) + "." + ((base & 0xff) + 1);
        String inside = "10.250." + (base >> 8) + "." + ((base & 0xff) + 2);
        String hostLink = "hv" + id;
        String insideLink = "nv" + id;
        NetworkNamespace namespace = new NetworkNamespace(name, host, inside);
        Runtime.getRuntime().addShutdownHook(new Thread(namespace::close, "delete-netns-" + name));
        run("ip", "netns", "add", name);
        run("ip", "link", "add", hostLink, "type", "veth", "peer", "name", insideLink);
        run("ip", "link", "set", insideLink, "netns", name);
        run("ip", "addr", "add", host + "/30", "dev", hostLink);
        run("ip", "link", "set", hostLink, "up");
        run("ip", "netns", "exec", name, "ip", "addr", "add", inside + "/30", "dev", insideLink);
        run("ip", "netns", "exec", name, "ip", "link", "set", insideLink, "up");
        run("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up");
        return namespace;
    }

    /** The namespace's own address, where its servers listen. */
    public String address() {
        return address;
    }

    /** {@code command} run inside the namespace. */
    public List<String> command(List<String> command) {
        List<String> inside = new ArrayList<>(List.of("ip", "netns", "exec", name));
        inside.addAll(command);
        return inside;
    }

    /** Drops every packet arriving for {@code port} from outside the namespace. */
    public void cutOff(int port) {
        run("ip", "netns", "exec", name, "iptables", "-I", "INPUT", "-p", "tcp", "-s", hostAddress,
                "--dport", String.valueOf(port), "-j", "DROP");
    }

    public void reconnect(int port) {
        run("ip", "netns", "exec", name, "iptables", "-D", "INPUT", "-p", "tcp", "-s", hostAddress,
                "--dport", String.valueOf(port), "-j", "DROP");
    }

    /** Deletes the namespace (its end of the veth pair with it, and so the pair). Safe to call twice. */
    @Override
    public void close() {
        try {
            new ProcessBuilder("ip", "netns", "delete", name).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(30, TimeUnit.SECONDS);
        } catch (IOException e) {
            // nothing left to delete
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command)
                    + " (the test makes a network namespace: it needs root and iproute2/iptables)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
