package dev.herald.dispatcher.auth;

import dev.herald.store.app.App;

/** The app whose API key authenticated the request. */
public record AuthenticatedApp(App app) {
    static final String ATTRIBUTE = AuthenticatedApp.class.getName();

    public String id() {
        return app.id();
    }
}
