package dev.herald.dispatcher.device;

import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.Problems;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The app's VAPID public key, for a web page's {@code pushManager.subscribe({applicationServerKey})}:
 * a push service then takes pushes for the subscription only when signed with the app's key pair.
 */
@AppApi
@RestController
public class VapidKeyController {

    /** {@code publicKey}: the 65-byte uncompressed P-256 point, base64url, as {@code applicationServerKey} takes it. */
    public record VapidPublicKey(String publicKey) {
    }

    @GetMapping("/v1/apps/{appId}/webpush/vapid-public-key")
    VapidPublicKey get(AuthenticatedApp app) {
        return app.app().webpush().map(credential -> new VapidPublicKey(credential.publicKey()))
                .orElseThrow(() -> Problems.notFound("app " + app.id() + " has no VAPID key pair; the admin API makes one "
                        + "(POST /v1/apps/" + app.id() + "/credentials/webpush)"));
    }
}
