package dev.herald.sandbox.faults;

/**
 * Reads the deterministic prefixes of design.md from a token. Prefixes win over random faults,
 * so a scripted token behaves the same whatever the rates are.
 */
final class TokenPrefix {
    private TokenPrefix() {
    }

    /** The decision the prefix forces for the {@code attempt}-th (1-based) attempt, or null if none. */
    static Decision forced(String token, long attempt) {
        if (token.startsWith("unregistered-")) {
            return Decision.UNREGISTERED;
        }
        if (token.startsWith("bad-")) {
            return Decision.BAD_TOKEN;
        }
        long throttled = count(token, "throttled");
        if (throttled >= 0) {
            return attempt <= throttled ? Decision.THROTTLED : null;
        }
        long flaky = count(token, "flaky");
        if (flaky >= 0) {
            return attempt <= flaky ? Decision.UNAVAILABLE : null;
        }
        return null;
    }

    /** N from {@code <word><N>-...}, or -1 if the token does not have that shape. */
    static long count(String token, String word) {
        if (!token.startsWith(word)) {
            return -1;
        }
        int end = word.length();
        long n = 0;
        while (end < token.length() && Character.isDigit(token.charAt(end)) && end - word.length() < 9) {
            n = n * 10 + (token.charAt(end) - '0');
            end++;
        }
        boolean shaped = end > word.length() && end < token.length() && token.charAt(end) == '-';
        return shaped ? n : -1;
    }
}
