package dev.herald.dispatcher.auth;

import dev.herald.store.app.App;

/** The app whose API key authenticated the request. */
public record AuthenticatedApp(App app) {
    /** The request attribute holding it, set by the authentication before any handler or later interceptor runs. */
    public static final String ATTRIBUTE = AuthenticatedApp.class.getName();

    public String id() {
        return app.id();
    }
}
