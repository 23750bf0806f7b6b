package dev.herald.dispatcher.admin;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.audit.AdminAudit;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.dispatcher.auth.AdminCaller;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.store.app.ApiKeyIndex;
import dev.herald.store.app.ApiKeys;
import dev.herald.store.app.App;
import dev.herald.store.app.AppCache;
import dev.herald.store.app.AppLimits;
import dev.herald.store.app.AppStore;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.webpush.WebPushCredential;
import dev.herald.store.app.FcmTokenHosts;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;
import java.net.URI;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Apps, API keys and provider credentials; every call needs the admin token. */
@AdminApi
@RestController
public class AppAdminController {
    private static final Logger log = LoggerFactory.getLogger(AppAdminController.class);

    public record CreateApp(
            @NotNull(message = "is required") @Pattern(regexp = Ids.APP_ID, message = "must match " + Ids.APP_ID) String id,
            @NotBlank(message = "is required") @Size(max = 200, message = "must be at most 200 characters") String name) {
    }

    /** A key as issued: {@code key} is shown this once and stored only as a hash. */
    public record IssuedKey(String keyId, String key) {
        static IssuedKey of(ApiKeys.Issued issued) {
            return new IssuedKey(issued.keyId(), issued.key());
        }

        @Override
        public String toString() {
            return "IssuedKey[keyId=" + keyId + ", key=***]";
        }
    }

    public record CreatedApp(String id, String name, IssuedKey apiKey) {
    }

    public record FcmRequest(JsonNode serviceAccount) {
        @Override
        public String toString() {
            return "FcmRequest[***]";
        }
    }

    public record ApnsRequest(String p8, String keyId, String teamId, String topic, String environment) {
        @Override
        public String toString() {
            return "ApnsRequest[keyId=" + keyId + ", teamId=" + teamId + ", p8=***]";
        }
    }

    /**
     * An app's own VAPID key pair for Web Push (base64url: the 32-byte private scalar, the 65-byte
     * public point) and optional {@code sub} contact; or, for a fresh pair made by Herald, only
     * {@code subject} (or nothing).
     */
    public record WebPushRequest(String privateKey, String publicKey, String subject) {
        @Override
        public String toString() {
            return "WebPushRequest[publicKey=" + publicKey + ", subject=" + subject + ", privateKey=***]";
        }
    }

    /** An app as the admin API shows it: no secrets, only key ids and the public parts of credentials. */
    public record AppView(String id, String name, Instant createdAt, List<KeyView> keys, FcmView fcm, ApnsView apns,
                          LimitsRequest limits, WebPushView webpush) {
        static AppView of(App app) {
            return new AppView(app.id(), app.name(), app.createdAt(),
                    app.keys().stream().map(k -> new KeyView(k.keyId(), k.createdAt()))
                            .sorted(Comparator.comparing(KeyView::createdAt)).toList(),
                    app.fcm().map(f -> new FcmView(f.projectId(), f.clientEmail(), CredentialFingerprints.of(f.serviceAccountJson()),
                            app.credentialsSetAt().get("fcm"))).orElse(null),
                    app.apns().map(a -> new ApnsView(a.keyId(), a.teamId(), a.topic(), a.environment(),
                            CredentialFingerprints.of(a.p8()), app.credentialsSetAt().get("apns"))).orElse(null),
                    LimitsRequest.of(app.limits()),
                    app.webpush().map(WebPushView::of).orElse(null));
        }
    }

    /** The public half of the app's VAPID key pair (the browser's {@code applicationServerKey}) and its subject. */
    public record WebPushView(String publicKey, String subject) {
        static WebPushView of(WebPushCredential credential) {
            return new WebPushView(credential.publicKey(), credential.subject());
        }
    }

    /**
     * An app's own rate limits; a field left out (or null) is the service's default. The bounds keep
     * a typo from turning a limit off: at most FCM's published quota ten times over.
     */
    public record LimitsRequest(
            @Positive(message = "must be at least 1") @Max(value = 6_000_000, message = "must be at most 6000000") Long fcmPerMinute,
            @Positive(message = "must be at least 1") @Max(value = 6_000_000, message = "must be at most 6000000") Long apnsPerMinute,
            @Positive(message = "must be at least 1") @Max(value = 1_000_000, message = "must be at most 1000000") Long apiPerSecond) {
        static LimitsRequest of(AppLimits limits) {
            return new LimitsRequest(limits.fcmPerMinute(), limits.apnsPerMinute(), limits.apiPerSecond());
        }
    }

    public record KeyView(String keyId, Instant createdAt) {
    }

    /** @param fingerprint of the secret (CredentialFingerprints), so an admin can tell which one is set; setAt null if set before it was kept */
    public record FcmView(String projectId, String clientEmail, String fingerprint, Instant setAt) {
    }

    public record ApnsView(String keyId, String teamId, String topic, String environment, String fingerprint, Instant setAt) {
    }

    private final AppStore store;
    private final AppCache cache;
    private final ApiKeyIndex keyIndex;
    private final RequestValidator validator;
    private final JsonMapper json;
    private final FcmTokenHosts tokenHosts;
    private final AdminAudit audit;

    public AppAdminController(AppStore store, AppCache cache, ApiKeyIndex keyIndex, RequestValidator validator,
                              JsonMapper json, FcmTokenHosts tokenHosts, AdminAudit audit) {
        this.tokenHosts = tokenHosts;
        this.audit = audit;
        this.store = store;
        this.cache = cache;
        this.keyIndex = keyIndex;
        this.validator = validator;
        this.json = json;
    }

    @PostMapping("/v1/apps")
    ResponseEntity<CreatedApp> create(AdminCaller caller, @RequestBody CreateApp request) {
        validator.validate(request);
        ApiKeys.Issued issued = await(store.create(request.id(), request.name().strip()))
                .orElseThrow(() -> Problems.conflict("app " + request.id() + " already exists"));
        changed(request.id());
        await(keyIndex.issued(issued.keyId(), request.id()));
        log.info("app {} created with key {}", request.id(), issued.keyId());
        audit.record(caller, "app.created", request.id(), issued.keyId(), null);
        return ResponseEntity.created(URI.create("/v1/apps/" + request.id()))
                .body(new CreatedApp(request.id(), request.name().strip(), IssuedKey.of(issued)));
    }

    @GetMapping("/v1/apps/{appId}")
    AppView get(@PathVariable String appId) {
        return AppView.of(app(appId));
    }

    @PostMapping("/v1/apps/{appId}/keys")
    ResponseEntity<IssuedKey> addKey(AdminCaller caller, @PathVariable String appId) {
        Ids.appId(appId);
        ApiKeys.Issued issued = await(store.addKey(appId)).orElseThrow(() -> unknownApp(appId));
        changed(appId);
        await(keyIndex.issued(issued.keyId(), appId));
        log.info("app {}: key {} added", appId, issued.keyId());
        audit.record(caller, "key.created", appId, issued.keyId(), null);
        return ResponseEntity.status(201).body(IssuedKey.of(issued));
    }

    @DeleteMapping("/v1/apps/{appId}/keys/{keyId}")
    ResponseEntity<Void> revokeKey(AdminCaller caller, @PathVariable String appId, @PathVariable String keyId) {
        app(appId);
        if (!keyId.matches(Ids.KEY_ID) || !await(store.revokeKey(appId, keyId))) {
            throw Problems.notFound("app " + appId + " has no key with this id");
        }
        changed(appId);
        await(keyIndex.revoked(keyId));
        log.info("app {}: key {} revoked", appId, keyId);
        audit.record(caller, "key.revoked", appId, keyId, null);
        return ResponseEntity.noContent().build();
    }

    @PutMapping("/v1/apps/{appId}/credentials/fcm")
    ResponseEntity<Void> setFcm(AdminCaller caller, @PathVariable String appId, @RequestBody FcmRequest request) {
        Ids.appId(appId);
        FcmCredential credential = CredentialChecks.fcm(request.serviceAccount(), tokenHosts, json);
        if (!await(store.setFcm(appId, credential))) {
            throw unknownApp(appId);
        }
        changed(appId);
        log.info("app {}: FCM credential set", appId);
        audit.record(caller, "credential.set", appId, "fcm", CredentialFingerprints.of(credential.serviceAccountJson()));
        return ResponseEntity.noContent().build();
    }

    @PutMapping("/v1/apps/{appId}/credentials/apns")
    ResponseEntity<Void> setApns(AdminCaller caller, @PathVariable String appId, @RequestBody ApnsRequest request) {
        Ids.appId(appId);
        ApnsCredential credential = CredentialChecks.apns(request.p8(), request.keyId(), request.teamId(),
                request.topic(), request.environment());
        if (!await(store.setApns(appId, credential))) {
            throw unknownApp(appId);
        }
        changed(appId);
        log.info("app {}: APNs credential set", appId);
        audit.record(caller, "credential.set", appId, "apns", CredentialFingerprints.of(credential.p8()));
        return ResponseEntity.noContent().build();
    }

    /** Uploads the app's own VAPID key pair (e.g. the one its web pages already subscribe with). */
    @PutMapping("/v1/apps/{appId}/credentials/webpush")
    WebPushView setWebPush(AdminCaller caller, @PathVariable String appId, @RequestBody WebPushRequest request) {
        Ids.appId(appId);
        WebPushCredential credential;
        try {
            credential = WebPushCredential.checked(request.privateKey(), request.publicKey(), request.subject());
        } catch (IllegalArgumentException e) {
            String[] fieldAndMessage = e.getMessage().split(": ", 2);
            throw Problems.invalidField(fieldAndMessage[0], fieldAndMessage[1]);
        }
        WebPushView view = storeWebPush(appId, credential, "uploaded");
        audit.record(caller, "credential.set", appId, "webpush", "public key " + credential.publicKey());
        return view;
    }

    /**
     * Makes a fresh VAPID key pair for the app (every app gets one at creation; this replaces it).
     * Browsers subscribed with the old public key must subscribe again.
     */
    @PostMapping("/v1/apps/{appId}/credentials/webpush")
    WebPushView generateWebPush(AdminCaller caller, @PathVariable String appId,
                                @RequestBody(required = false) WebPushRequest request) {
        Ids.appId(appId);
        String subject = request == null ? null : request.subject();
        if (request != null && (request.privateKey() != null || request.publicKey() != null)) {
            throw Problems.invalidField("privateKey", "is not taken here: upload a key pair with PUT");
        }
        if (subject != null && !subject.startsWith("mailto:") && !subject.startsWith("https://")) {
            throw Problems.invalidField("subject", "must be a mailto: or https: URI");
        }
        WebPushCredential credential = WebPushCredential.generate(subject);
        WebPushView view = storeWebPush(appId, credential, "generated");
        audit.record(caller, "credential.generated", appId, "webpush", "public key " + credential.publicKey());
        return view;
    }

    private WebPushView storeWebPush(String appId, WebPushCredential credential, String how) {
        if (!await(store.setWebPush(appId, credential))) {
            throw unknownApp(appId);
        }
        changed(appId);
        log.info("app {}: VAPID key pair {} (public key {})", appId, how, credential.publicKey());
        return WebPushView.of(credential);
    }

    /** Replaces the app's rate limits (provider quotas for the gateway, the API rate here). */
    @PutMapping("/v1/apps/{appId}/limits")
    LimitsRequest setLimits(AdminCaller caller, @PathVariable String appId, @RequestBody LimitsRequest request) {
        Ids.appId(appId);
        validator.validate(request);
        AppLimits limits = new AppLimits(request.fcmPerMinute(), request.apnsPerMinute(), request.apiPerSecond());
        if (!await(store.setLimits(appId, limits))) {
            throw unknownApp(appId);
        }
        changed(appId);
        log.info("app {}: limits set to {}", appId, limits);
        audit.record(caller, "limits.set", appId, null, "fcmPerMinute=" + limits.fcmPerMinute() + ", apnsPerMinute="
                + limits.apnsPerMinute() + ", apiPerSecond=" + limits.apiPerSecond());
        return LimitsRequest.of(limits);
    }

    @DeleteMapping("/v1/apps/{appId}/credentials/fcm")
    ResponseEntity<Void> clearFcm(AdminCaller caller, @PathVariable String appId) {
        return clearCredential(caller, appId, "fcm");
    }

    @DeleteMapping("/v1/apps/{appId}/credentials/apns")
    ResponseEntity<Void> clearApns(AdminCaller caller, @PathVariable String appId) {
        return clearCredential(caller, appId, "apns");
    }

    @DeleteMapping("/v1/apps/{appId}/credentials/webpush")
    ResponseEntity<Void> clearWebPush(AdminCaller caller, @PathVariable String appId) {
        return clearCredential(caller, appId, "webpush");
    }

    /**
     * One path per provider (not {@code credentials/{provider}}), so that {@code OPTIONS} and
     * {@code Allow} on a credential's path list exactly the methods its document entry has.
     */
    private ResponseEntity<Void> clearCredential(AdminCaller caller, String appId, String provider) {
        Ids.appId(appId);
        if (!await(store.clearCredential(appId, provider))) {
            throw unknownApp(appId);
        }
        changed(appId);
        log.info("app {}: {} credential removed", appId, provider);
        audit.record(caller, "credential.deleted", appId, provider, null);
        return ResponseEntity.noContent().build();
    }

    private App app(String appId) {
        Ids.appId(appId);
        return await(cache.get(appId)).orElseThrow(() -> unknownApp(appId));
    }

    /** This process sees its own change at once; others drop their copy on the registry's notification. */
    private void changed(String appId) {
        cache.invalidate(appId);
    }

    private static RuntimeException unknownApp(String appId) {
        return Problems.notFound("app " + appId + " does not exist");
    }
}
