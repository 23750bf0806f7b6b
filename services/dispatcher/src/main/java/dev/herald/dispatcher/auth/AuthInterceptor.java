package dev.herald.dispatcher.auth;

import dev.herald.dispatcher.Futures;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.app.ApiKeyIndex;
import dev.herald.store.app.ApiKeys;
import dev.herald.store.app.App;
import dev.herald.store.app.AppCache;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Map;
import java.util.Optional;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Authenticates every {@code /v1} call before its body is read. Admin handlers need the admin token;
 * app handlers need a key of the app in the path:
 * <ul>
 * <li>no bearer token, or one not shaped like an API key: 401 with a {@code WWW-Authenticate} challenge;</li>
 * <li>the app does not exist: 404;</li>
 * <li>the key is valid, but for another app: 403;</li>
 * <li>otherwise (revoked, made up): 401.</li>
 * </ul>
 * The app and its key hashes come from {@link AppCache}, so a valid request costs no Redis round trip.
 */
public final class AuthInterceptor implements HandlerInterceptor {
    private final AdminToken adminToken;
    private final AppCache apps;
    private final ApiKeyIndex keyIndex;

    public AuthInterceptor(AdminToken adminToken, AppCache apps, ApiKeyIndex keyIndex) {
        this.adminToken = adminToken;
        this.apps = apps;
        this.keyIndex = keyIndex;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (!(handler instanceof HandlerMethod method)) {
            return true; // static resources (the OpenAPI document)
        }
        Class<?> type = method.getBeanType();
        if (type.isAnnotationPresent(AdminApi.class)) {
            admin(request);
        } else if (type.isAnnotationPresent(AppApi.class)) {
            request.setAttribute(AuthenticatedApp.ATTRIBUTE, new AuthenticatedApp(app(request)));
        } else if (type.getPackageName().startsWith("dev.herald.dispatcher")) {
            throw new IllegalStateException(type.getName() + " serves /v1 but is marked neither @AdminApi nor @AppApi");
        }
        return true;
    }

    private void admin(HttpServletRequest request) {
        String token = BearerTokens.of(request).orElseThrow(() ->
                Problems.unauthorized("send the admin token as Authorization: Bearer <token>", null));
        if (!adminToken.matches(token)) {
            throw Problems.unauthorized("the admin token is not valid", "invalid_token");
        }
        String forwardedFor = request.getHeader("X-Forwarded-For");
        if (forwardedFor != null && forwardedFor.length() > 200) {
            forwardedFor = forwardedFor.substring(0, 200);
        }
        request.setAttribute(AdminCaller.ATTRIBUTE, new AdminCaller("admin:" + adminToken.fingerprint(), request.getRemoteAddr(),
                forwardedFor));
    }

    private App app(HttpServletRequest request) {
        String key = BearerTokens.of(request).orElseThrow(() ->
                Problems.unauthorized("send an API key of the app as Authorization: Bearer <key>", null));
        String keyId = ApiKeys.keyIdOf(key).orElseThrow(() ->
                Problems.unauthorized("the bearer token is not a Herald API key", "invalid_token"));
        String appId = pathVariable(request, "appId");
        if (!dev.herald.dispatcher.Ids.isAppId(appId)) {
            throw Problems.notFound("no such app");
        }
        App app = Futures.await(apps.get(appId)).orElseThrow(() -> Problems.notFound("app " + appId + " does not exist"));
        if (ApiKeys.matches(app, key)) {
            return app;
        }
        Optional<String> owner = Futures.await(keyIndex.appOf(keyId));
        if (owner.isPresent() && !owner.get().equals(appId)
                && Futures.await(apps.get(owner.get())).map(other -> ApiKeys.matches(other, key)).orElse(false)) {
            throw Problems.forbidden("this API key belongs to another app");
        }
        throw Problems.unauthorized("the API key is not valid for this app (unknown or revoked)", "invalid_token");
    }

    @SuppressWarnings("unchecked")
    private static String pathVariable(HttpServletRequest request, String name) {
        Object variables = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        return variables instanceof Map<?, ?> map ? ((Map<String, String>) map).get(name) : null;
    }
}
