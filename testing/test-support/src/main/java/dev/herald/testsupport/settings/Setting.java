package dev.herald.testsupport.settings;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One setting as Spring Boot's configuration processor describes it in
 * {@code META-INF/spring-configuration-metadata.json}: the generated record of a
 * {@code @ConfigurationProperties} record's defaults ({@code @DefaultValue}) and documentation
 * (its javadoc {@code @param}s).
 *
 * @param name         canonical property name, e.g. {@code herald.gateway.max-in-flight}
 * @param type         Java type as the processor writes it
 * @param defaultValue the default as text (lists comma-separated), empty when there is none
 * @param description  the record component's javadoc
 * @param sourceType   the record that declares it
 */
public record Setting(String name, String type, String defaultValue, String description, String sourceType) {
    private static final String METADATA = "META-INF/spring-configuration-metadata.json";

    /** Every setting of every metadata file on the classpath (this module's, its dependencies', Spring Boot's). */
    public static List<Setting> onClasspath() {
        JsonMapper json = JsonMapper.builder().build();
        List<Setting> settings = new ArrayList<>();
        try {
            for (URL url : Collections.list(Setting.class.getClassLoader().getResources(METADATA))) {
                try (InputStream in = url.openStream()) {
                    for (JsonNode property : json.readTree(in).path("properties")) {
                        settings.add(new Setting(property.path("name").asString(), property.path("type").asString(""),
                                text(property.path("defaultValue")), property.path("description").asString(""),
                                property.path("sourceType").asString("")));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return settings;
    }

    /** The settings declared by {@code records} (and the records nested in them), sorted by name. */
    public static List<Setting> of(Class<?>... records) {
        List<String> names = Arrays.stream(records).map(Class::getName).toList();
        return onClasspath().stream()
                .filter(s -> names.stream().anyMatch(n -> s.sourceType.equals(n) || s.sourceType.startsWith(n + "$")))
                .distinct().sorted((a, b) -> a.name.compareTo(b.name)).toList();
    }

    private static String text(JsonNode value) {
        if (value.isMissingNode() || value.isNull()) {
            return "";
        }
        if (value.isArray()) {
            List<String> items = new ArrayList<>();
            value.forEach(item -> items.add(item.asString()));
            return String.join(",", items);
        }
        String text = value.asString();
        // the processor writes a @DefaultValue of several items as "[a, b]"
        return text.startsWith("[") && text.endsWith("]")
                ? Arrays.stream(text.substring(1, text.length() - 1).split(",")).map(String::strip).collect(Collectors.joining(","))
                : text;
    }

    /** The environment variable form a deployment (and the charts' {@code config}) uses. */
    public String env() {
        return name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /**
     * Whether Spring's relaxed binding reads environment variable {@code variable} as this setting:
     * dots and dashes as underscores, or dashes dropped.
     */
    public boolean boundFrom(String variable) {
        return variable.equals(env()) || variable.equals(name.toUpperCase(Locale.ROOT).replace(".", "_").replace("-", ""));
    }

    /** The type without packages: {@code Duration}, {@code List<String>}. */
    public String simpleType() {
        return type.replaceAll("\\b[a-z]\\w*\\.", "");
    }
}
