package dev.herald.dispatcher.admin;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.audit.AdminAudit;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.dispatcher.auth.AdminCaller;
import dev.herald.store.app.AppStore;
import dev.herald.store.crypto.CredentialCipher;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The credential key rotation's last step ({@code POST /v1/admin/credentials/re-encrypt}, admin
 * token): rewrites every stored provider credential with the current key ({@code herald.crypto-key}).
 * When it reports nothing undecryptable, the previous keys can be removed. Safe to run again.
 */
@AdminApi
@RestController
public class CredentialKeyController {
    private static final Logger log = LoggerFactory.getLogger(CredentialKeyController.class);

    /**
     * @param keyId         the current key's id, which every credential now starts with
     * @param reencrypted   credentials rewritten by this run
     * @param alreadyCurrent credentials that were under the current key already
     * @param undecryptable {@code <app>/cred:<provider>} of credentials no configured key opens: keep
     *                      (or restore) the previous key they need and run again
     */
    public record Reencryption(String keyId, int apps, int reencrypted, int alreadyCurrent, List<String> undecryptable) {
    }

    private final AppStore store;
    private final CredentialCipher cipher;
    private final AdminAudit audit;

    public CredentialKeyController(AppStore store, CredentialCipher cipher, AdminAudit audit) {
        this.store = store;
        this.cipher = cipher;
        this.audit = audit;
    }

    @PostMapping("/v1/admin/credentials/re-encrypt")
    Reencryption reencrypt(AdminCaller caller) {
        AppStore.Reencryption done = await(store.reencryptAll());
        Reencryption result = new Reencryption(cipher.currentKeyId(), done.apps(), done.reencrypted(), done.current(),
                done.undecryptable());
        log.info("credentials re-encrypted with key {}: {} rewritten, {} already current, {} undecryptable, in {} apps",
                result.keyId(), result.reencrypted(), result.alreadyCurrent(), result.undecryptable().size(), result.apps());
        audit.record(caller, "credentials.re-encrypted", null, "key " + result.keyId(), result.reencrypted() + " rewritten, "
                + result.alreadyCurrent() + " already current, " + result.undecryptable().size() + " undecryptable, in "
                + result.apps() + " apps");
        return result;
    }
}
