package dev.herald.dispatcher.auth;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Handlers under {@code /v1/apps/{appId}/...} that require one of that app's API keys; they receive
 * the app as an {@link AuthenticatedApp} parameter.
 */
@Documented
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
public @interface AppApi {
}
