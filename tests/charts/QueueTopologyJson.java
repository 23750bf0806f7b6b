import dev.herald.contract.QueueTopology;
import dev.herald.contract.Queues;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Prints, as JSON, the queue topology the services declare (libs/contract), so that the chart tests
 * (test_queue_topology.py) compare charts/push-platform's Queue resources with the code rather than
 * a copy. Run with the contract's classes on the class path (single-file source launch):
 *   java -cp libs/contract/target/classes tests/charts/QueueTopologyJson.java
 */
class QueueTopologyJson {
    public static void main(String[] args) {
        System.out.println("{\"exchange\":" + quote(Queues.EXCHANGE)
                + ",\"deadLetterExchange\":" + quote(Queues.DEAD_LETTER_EXCHANGE)
                + ",\"deadLetterQueue\":" + quote(Queues.DEAD)
                + ",\"workQueues\":[" + QueueTopology.WORK_QUEUES.stream().map(QueueTopologyJson::quote)
                        .collect(Collectors.joining(",")) + "]"
                + ",\"workQueueArguments\":" + json(QueueTopology.workQueueArguments())
                + ",\"deadQueueArguments\":" + json(QueueTopology.deadQueueArguments())
                + ",\"parkExchange\":" + quote(Queues.PARK_EXCHANGE)
                + ",\"parkedQueue\":" + quote(Queues.PARKED)
                + ",\"parkedQueueArguments\":" + json(QueueTopology.parkedQueueArguments()) + "}");
    }

    private static String json(Map<String, Object> map) {
        return new TreeMap<>(map).entrySet().stream()
                .map(e -> quote(e.getKey()) + ":" + (e.getValue() instanceof Number n ? n.toString() : quote(e.getValue().toString())))
                .collect(Collectors.joining(",", "{", "}"));
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
