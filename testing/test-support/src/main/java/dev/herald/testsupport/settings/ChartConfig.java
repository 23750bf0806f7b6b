package dev.herald.testsupport.settings;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.yaml.snakeyaml.Yaml;

/**
 * A service chart's settings against its service's configuration metadata, so a default has one
 * home (the properties record): every {@code config} entry of {@code values.yaml} and
 * {@code ci/*-values.yaml} names a real setting (environment form), restates no default unless its
 * line says why ({@link #ON_PURPOSE}), and every "(default X)" the chart's comments or README
 * give after a setting's name is the metadata's default.
 */
public final class ChartConfig {
    /** Trailing comment of a {@code config} line that keeps a default's value on purpose, followed by the reason. */
    public static final String ON_PURPOSE = "# default on purpose:";
    private static final Pattern DOCUMENTED_DEFAULT =
            Pattern.compile("(herald\\.[a-z0-9.-]*[a-z0-9]|HERALD_[A-Z0-9_]*[A-Z0-9])[^()\\n]*\\(default ([^)]+)\\)");

    private ChartConfig() {
    }

    /** Fails with every disagreement between chart {@code chart} and the settings of {@code records} (and Spring's). */
    public static void assertAgrees(String chart, Class<?>... records) {
        List<Setting> own = Setting.of(records);
        List<Setting> known = Stream.concat(own.stream(),
                Setting.onClasspath().stream().filter(s -> !s.name().startsWith("herald."))).toList();
        Path root = Repository.root();
        Path dir = root.resolve("charts").resolve(chart);
        List<String> problems = new ArrayList<>();
        try (Stream<Path> ci = Files.list(dir.resolve("ci"))) {
            List<Path> valueFiles = Stream.concat(Stream.of(dir.resolve("values.yaml")),
                    ci.filter(p -> p.toString().endsWith(".yaml")).sorted()).toList();
            for (Path file : valueFiles) {
                String text = Files.readString(file);
                Object config = Optional.ofNullable(new Yaml().<Map<String, Object>>load(text)).orElse(Map.of()).get("config");
                if (config instanceof Map<?, ?> entries) {
                    entries.forEach((key, value) -> check(root.relativize(file), text, key.toString(), value, known, problems));
                }
            }
            for (Path file : Stream.concat(valueFiles.stream(),
                    Stream.of(dir.resolve("README.md"), root.resolve("charts/README.md"))).filter(Files::exists).toList()) {
                checkDocumentedDefaults(root.relativize(file), Files.readString(file), own, problems);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (!problems.isEmpty()) {
            fail("chart " + chart + " disagrees with the settings' metadata (docs/settings.md):\n  " + String.join("\n  ", problems));
        }
    }

    private static void check(Path file, String text, String key, Object value, List<Setting> known, List<String> problems) {
        Optional<Setting> setting = known.stream().filter(s -> s.boundFrom(key)).findFirst();
        if (setting.isEmpty()) {
            problems.add(file + ": config." + key + " names no setting of this service");
        } else if (!setting.get().defaultValue().isEmpty() && same(value, setting.get().defaultValue())
                && !Pattern.compile("(?m)^\\s*" + Pattern.quote(key) + "\\s*:.*" + Pattern.quote(ON_PURPOSE)).matcher(text).find()) {
            problems.add(file + ": config." + key + " restates the default of " + setting.get().name() + " ("
                    + setting.get().defaultValue() + "): drop it, or say why with '" + ON_PURPOSE + " ...'");
        }
    }

    private static void checkDocumentedDefaults(Path file, String text, List<Setting> own, List<String> problems) {
        Matcher m = DOCUMENTED_DEFAULT.matcher(text);
        while (m.find()) {
            String name = m.group(1);
            String documented = m.group(2).strip().replace("`", "").replace("\"", "");
            own.stream().filter(s -> s.name().equals(name) || s.boundFrom(name)).findFirst()
                    .filter(s -> !same(documented, s.defaultValue()))
                    .ifPresent(s -> problems.add(file + ": documents " + name + " (default " + documented + "), the metadata's default is "
                            + (s.defaultValue().isEmpty() ? "none" : s.defaultValue())));
        }
    }

    private static boolean same(Object value, String defaultValue) {
        return normalized(String.valueOf(value)).equals(normalized(defaultValue));
    }

    private static String normalized(String value) {
        return value.strip().replaceAll("\\s*,\\s*", ",");
    }
}
