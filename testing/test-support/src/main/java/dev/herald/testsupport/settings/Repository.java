package dev.herald.testsupport.settings;

import java.nio.file.Files;
import java.nio.file.Path;

/** The repository's root, found from a module's working directory (Maven runs tests there). */
public final class Repository {
    private Repository() {
    }

    public static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("charts")) && Files.isDirectory(dir.resolve("docs"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root (with charts/ and docs/) above " + Path.of("").toAbsolutePath());
    }
}
