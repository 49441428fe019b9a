package dev.sandbox.implementation.session;

import dev.sandbox.InvalidArgumentException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The checks every provider makes on {@link dev.sandbox.SandboxSession#addLabels}, and the merge of the added labels
 * into those a session has. Internal: not part of the public API.
 */
public final class LabelUpdate {
    /** The most labels one call may add. */
    public static final int MAX_LABELS = 64;
    /** The longest key. */
    public static final int MAX_KEY = 256;
    /** The longest value. */
    public static final int MAX_VALUE = 4096;

    private LabelUpdate() {}

    /**
     * Checks labels to add: not null, not empty, at most {@value #MAX_LABELS}, keys not empty and not starting with a
     * reserved prefix, values present, lengths bounded.
     *
     * @param labels the labels to add
     * @param reservedPrefixes key prefixes the provider keeps for itself
     * @return an unmodifiable copy, in the caller's order
     * @throws InvalidArgumentException naming the field {@code labels} and the offending key
     */
    public static Map<String, String> checked(Map<String, String> labels, String... reservedPrefixes) {
        if (labels == null || labels.isEmpty()) {
            throw new InvalidArgumentException("labels", "labels to add must not be empty, got " + labels);
        }
        if (labels.size() > MAX_LABELS) {
            throw new InvalidArgumentException(
                    "labels", "at most " + MAX_LABELS + " labels may be added at once, got " + labels.size());
        }
        Map<String, String> copy = new LinkedHashMap<>();
        labels.forEach((k, v) -> {
            if (k == null || k.isEmpty()) {
                throw new InvalidArgumentException("labels", "labels has an empty key");
            }
            if (k.length() > MAX_KEY) {
                throw new InvalidArgumentException(
                        "labels", "label key longer than " + MAX_KEY + " characters: '" + k.substring(0, 40) + "...'");
            }
            for (String prefix : reservedPrefixes) {
                if (k.startsWith(prefix)) {
                    throw new InvalidArgumentException(
                            "labels", "labels may not start with '" + prefix + "', got '" + k + "'");
                }
            }
            if (v == null) {
                throw new InvalidArgumentException("labels", "label '" + k + "' has no value");
            }
            if (v.length() > MAX_VALUE) {
                throw new InvalidArgumentException(
                        "labels", "the value of label '" + k + "' is longer than " + MAX_VALUE + " characters");
            }
            copy.put(k, v);
        });
        return Collections.unmodifiableMap(copy);
    }

    /**
     * The labels a session has after an addition.
     *
     * @param current the labels it had
     * @param added the labels added, which win
     * @return an unmodifiable map
     */
    public static Map<String, String> merged(Map<String, String> current, Map<String, String> added) {
        Map<String, String> out = new LinkedHashMap<>(current);
        out.putAll(added);
        return Collections.unmodifiableMap(out);
    }
}
