package dev.herald.dispatcher.problem;

/**
 * The {@code limit} query parameter of every listing, read one way: absent means the listing's
 * default, anything but a whole number from 1 to the listing's maximum is a 400. Controllers take
 * it as an optional string rather than with Spring's {@code defaultValue}, which Spring also applies
 * to an empty {@code ?limit=}: a value the OpenAPI document refuses.
 */
public final class PageLimits {

    private PageLimits() {
    }

    /**
     * @param raw the parameter as sent, {@code null} when absent
     * @param absent the page size when the parameter is absent
     * @param max the largest page size the listing serves
     */
    public static int parse(String raw, int absent, int max) {
        if (raw == null) {
            return absent;
        }
        // Digits only: Integer.parseInt would also take "+20", which the document's integer type does not.
        if (!raw.isEmpty() && raw.length() <= 9 && raw.chars().allMatch(c -> c >= '0' && c <= '9')) {
            int parsed = Integer.parseInt(raw);
            if (parsed >= 1 && parsed <= max) {
                return parsed;
            }
        }
        throw Problems.invalidField("limit", "must be a whole number from 1 to " + max);
    }
}
