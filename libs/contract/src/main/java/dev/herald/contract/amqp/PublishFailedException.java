package dev.herald.contract.amqp;

/** RabbitMQ did not take responsibility for a message; {@link #reason()} is a metric tag. */
public final class PublishFailedException extends Exception {
    /** Why: low-cardinality, used as the {@code reason} tag of {@code herald.dispatcher.publish.failures}. */
    public enum Reason {
        connection, nack, unroutable, timeout, interrupted,
        /** RabbitMQ blocks publishing while a resource alarm (memory, disk) is raised: not tried. */
        blocked
    }

    private final Reason reason;

    public PublishFailedException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
