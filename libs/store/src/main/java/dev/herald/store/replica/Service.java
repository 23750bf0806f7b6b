package dev.herald.store.replica;

/** The services whose replicas hold a lease; {@link #id} is the middle of the key {@code replica:<service>:<replica>}. */
public enum Service {
    GATEWAY("gateway"),
    CONNECTION_MANAGER("connection-manager");

    private final String id;

    Service(String id) {
        this.id = id;
    }

    public String id() {
        return id;
    }
}
