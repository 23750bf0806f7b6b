package dev.herald.gateway.fcm;

import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.auth.oauth2.ServiceAccountCredentials;
import dev.herald.store.app.App;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.app.FcmTokenHosts;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * OAuth2 access tokens for FCM, one google-auth-library credential per app credential. A token
 * still valid for a while is handed out without any I/O; refreshing (a blocking HTTP call inside
 * google-auth-library) runs off the event loop, and concurrent callers share one refresh.
 * A credential is rebuilt when the app's version changes (credential replaced).
 */
public final class FcmAccessTokens {
    static final String SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
    private static final Duration REFRESH_MARGIN = Duration.ofMinutes(5);

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final Clock clock;
    private final FcmTokenHosts tokenHosts;

    public FcmAccessTokens(Clock clock, FcmTokenHosts tokenHosts) {
        this.clock = clock;
        this.tokenHosts = tokenHosts;
    }

    private final class Entry {
        final long version;
        final GoogleCredentials credentials;
        volatile AccessToken token;
        volatile Mono<String> refreshing;

        Entry(long version, GoogleCredentials credentials) {
            this.version = version;
            this.credentials = credentials;
        }

        Mono<String> current() {
            AccessToken cached = token;
            if (cached != null && cached.getExpirationTime() != null
                    && cached.getExpirationTime().toInstant().isAfter(clock.instant().plus(REFRESH_MARGIN))) {
                return Mono.just(cached.getTokenValue());
            }
            return refresh();
        }

        synchronized Mono<String> refresh() {
            if (refreshing == null) {
                refreshing = Mono.fromCallable(() -> {
                            credentials.refresh();
                            AccessToken fresh = credentials.getAccessToken();
                            token = fresh;
                            return fresh.getTokenValue();
                        })
                        .subscribeOn(Schedulers.boundedElastic())
                        .doFinally(signal -> {
                            synchronized (this) {
                                refreshing = null;
                            }
                        })
                        .cache();
            }
            return refreshing;
        }

        synchronized void invalidate() {
            token = null;
        }
    }

    /**
     * A bearer token for the app's FCM credential.
     *
     * @throws FcmCredentialException if the credential cannot be used (not retryable)
     */
    public Mono<String> token(App app, FcmCredential credential) {
        return entry(app, credential).current();
    }

    /** FCM said the token is not valid (revoked early): the next call fetches a new one. */
    public void invalidate(App app) {
        Entry entry = entries.get(app.id());
        if (entry != null) {
            entry.invalidate();
        }
    }

    private Entry entry(App app, FcmCredential credential) {
        Entry existing = entries.get(app.id());
        if (existing != null && existing.version == app.version()) {
            return existing;
        }
        return entries.compute(app.id(), (id, current) -> current != null && current.version == app.version()
                ? current : new Entry(app.version(), credentials(credential)));
    }

    private GoogleCredentials credentials(FcmCredential credential) {
        GoogleCredentials credentials;
        try {
            credentials = GoogleCredentials.fromStream(new ByteArrayInputStream(
                    credential.serviceAccountJson().getBytes(StandardCharsets.UTF_8)));
        } catch (IOException | RuntimeException e) {
            // The message names no key material: google-auth only says what is missing.
            throw new FcmCredentialException("FCM service account cannot be used: " + e.getMessage(), e);
        }
        if (credentials instanceof ServiceAccountCredentials account) {
            // The dispatcher refuses such an account when it is set; this catches one stored before.
            if (!tokenHosts.allows(account.getTokenServerUri())) {
                String host = account.getTokenServerUri() == null ? null : account.getTokenServerUri().getHost();
                throw new FcmCredentialException("FCM service account's token_uri host " + host
                        + " is not in " + tokenHosts, null);
            }
        }
        return credentials.createScoped(List.of(SCOPE));
    }
}
