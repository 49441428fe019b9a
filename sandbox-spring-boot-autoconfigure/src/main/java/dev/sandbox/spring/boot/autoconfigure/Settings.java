package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.EgressRule;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** Checks of {@code sandbox.*} values, each failure an {@link InvalidArgumentException} naming the property. */
final class Settings {
    private Settings() {}

    /** An enum constant from its lower-case, dashed name, such as {@code runsc} or {@code if-not-present}. */
    static <E extends Enum<E>> E word(Class<E> type, String property, String text) {
        String name = text == null ? "" : text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E e : type.getEnumConstants()) {
            if (e.name().equals(name)) {
                return e;
            }
        }
        List<String> allowed = Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .toList();
        throw new InvalidArgumentException(property, property + " must be one of " + allowed + ", got '" + text + "'");
    }

    /** A positive duration, or {@code null} when unset. */
    static @Nullable Duration positiveOrNull(String property, @Nullable Duration value) {
        return value == null ? null : positive(property, value);
    }

    /** A positive duration; an unset one is refused. */
    static Duration positive(String property, @Nullable Duration value) {
        if (value == null) {
            throw new InvalidArgumentException(property, property + " must be set to a positive duration");
        }
        if (value.isZero() || value.isNegative()) {
            throw new InvalidArgumentException(property, property + " must be a positive duration, got " + value);
        }
        return value;
    }

    /** A non-blank text, trimmed. */
    static String required(String property, @Nullable String value, String why) {
        if (value == null || value.isBlank()) {
            throw new InvalidArgumentException(property, why);
        }
        return value.trim();
    }

    /** Rethrows an SDK setting error under the property's name: {@code memoryLimit} becomes {@code memory-limit}. */
    static InvalidArgumentException renamed(String prefix, InvalidArgumentException e) {
        String property =
                prefix + e.field().replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
        return new InvalidArgumentException(property, property + ": " + e.getMessage());
    }

    /**
     * An egress allowlist from its property's entries: each a domain ({@code pypi.org}, {@code *.example.com}) or a
     * block of addresses ({@code 10.0.0.0/8}, {@code fd00::/8}, an address alone), then optionally the ports it is
     * for, separated by spaces ({@code pypi.org 443}, {@code 10.1.0.0/16 5432 5433}).
     *
     * @param property the property, for errors
     * @param entries the entries
     * @return the allowlist, or {@code null} for no entry
     * @throws InvalidArgumentException naming the property and the entry
     */
    static @Nullable NetworkPolicy egress(String property, List<String> entries) {
        if (entries.isEmpty()) {
            return null;
        }
        NetworkPolicy policy = NetworkPolicy.allowlist();
        for (String entry : entries) {
            try {
                policy = policy.withRule(EgressRule.parse(entry));
            } catch (InvalidArgumentException e) {
                throw new InvalidArgumentException(property, property + ": '" + entry + "': " + e.getMessage());
            }
        }
        return policy;
    }
}
