package dev.herald.store.crypto;

/**
 * A stored credential cannot be decrypted with the keys this process has (its key was removed too
 * early, or the keys are not the ones the data was written with). The message names the settings
 * and the key id, never key material or ciphertext.
 */
public final class CredentialKeyException extends IllegalStateException {
    public CredentialKeyException(String message, Throwable cause) {
        super(message, cause);
    }
}
