package dev.herald.testsupport.settings;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * docs/settings.md, the settings reference, is generated from the configuration metadata: one
 * section per module, between {@code <!-- BEGIN module -->} and {@code <!-- END module -->}. Each
 * module's test compares its section with its metadata; with {@code -Dherald.settings.write=true}
 * it writes the section instead ({@link #REGENERATE}).
 */
public final class SettingsReference {
    public static final String REGENERATE = "mvn -q -pl :store,:dispatcher,:gateway,:connection-manager,:provider-sandbox -am test"
            + " -Dtest=SettingsReferenceTests -Dsurefire.failIfNoSpecifiedTests=false -Dherald.settings.write=true";

    private SettingsReference() {
    }

    /** Fails unless the section {@code module} of docs/settings.md lists exactly these records' settings. */
    public static void assertCurrent(String module, Class<?>... records) {
        Path file = Repository.root().resolve("docs/settings.md");
        String begin = "<!-- BEGIN " + module + " -->\n";
        String end = "<!-- END " + module + " -->";
        try {
            String doc = Files.readString(file);
            int from = doc.indexOf(begin);
            int to = doc.indexOf(end);
            if (from < 0 || to < from) {
                fail(file + " has no section '" + begin.strip() + "' ... '" + end + "'");
            }
            String current = doc.substring(from + begin.length(), to);
            String wanted = table(Setting.of(records));
            if (current.equals(wanted)) {
                return;
            }
            if (Boolean.getBoolean("herald.settings.write")) {
                Files.writeString(file, doc.substring(0, from + begin.length()) + wanted + doc.substring(to));
                return;
            }
            fail("docs/settings.md (section " + module + ") is stale: it does not match the configuration metadata of "
                    + module + ". Regenerate it from the repository root with:\n  " + REGENERATE
                    + "\nexpected section:\n" + wanted + "\nfound:\n" + current);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String table(List<Setting> settings) {
        StringBuilder table = new StringBuilder("| property | environment | type | default | description |\n")
                .append("| --- | --- | --- | --- | --- |\n");
        for (Setting s : settings) {
            table.append("| `").append(s.name()).append("` | `").append(s.env()).append("` | ")
                    .append("`").append(s.simpleType()).append("` | ")
                    .append(s.defaultValue().isEmpty() ? "" : "`" + s.defaultValue() + "`").append(" | ")
                    .append(cell(prose(s.description()))).append(" |\n");
        }
        return table.toString();
    }

    /** Javadoc inline tags as Markdown: {@code x} as `x`, {@link X} as X. */
    private static String prose(String javadoc) {
        return javadoc.replaceAll("\\{@code ([^}]*)}", "`$1`").replaceAll("\\{@link ([^}]*)}", "$1").replaceAll("\\s+", " ");
    }

    private static String cell(String text) {
        return text.replace("|", "\\|");
    }
}
