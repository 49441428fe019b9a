package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import com.fasterxml.jackson.databind.type.LogicalType;
import dev.sandbox.InvalidArgumentException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What every part of the wire format shares: the content types, the one {@link ObjectMapper}, reading a request body
 * strictly and an answer leniently, and binding a body to its record with errors that name the field and the value.
 *
 * <p>The mapper binds strictly, as the hand-written readers it replaced did: no coercion between strings, numbers and
 * booleans, no fractions for whole numbers, no numbers for enum names; unknown fields are ignored. Instants travel as
 * ISO-8601 strings.
 */
public final class WireJson {
    /** The shared mapper: strict data binding of the wire records, and trees. */
    static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new SimpleModule("sandbox-wire")
                    .addSerializer(Instant.class, ToStringSerializer.instance)
                    .addDeserializer(Instant.class, new InstantDeserializer()))
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .withCoercionConfigDefaults(c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .withCoercionConfig(
                    LogicalType.Textual,
                    c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
                            .setCoercion(CoercionInputShape.String, CoercionAction.TryConvert))
            .withCoercionConfig(
                    LogicalType.Enum, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.TryConvert))
            .build();

    /** Content type of JSON bodies. */
    public static final String APPLICATION_JSON = "application/json";

    /** Content type of raw bytes: file contents and stdin, never base64. */
    public static final String OCTET_STREAM = "application/octet-stream";

    /** The longest duration a body may carry: 100 years, so that no deadline computed from it overflows. */
    public static final long MAX_DURATION_MS = Duration.ofDays(36_500).toMillis();

    /** The most bytes a command's argv and environment (or a session's environment and secrets) may take together. */
    public static final int MAX_ARGV_ENV_BYTES = 1024 * 1024;

    private WireJson() {}

    /**
     * A duration field read from a body, range-checked.
     *
     * @param field the field, for errors
     * @param ms the milliseconds, or {@code null}
     * @return the duration, or {@code null}
     * @throws InvalidArgumentException naming the field when it is negative or over {@link #MAX_DURATION_MS}
     */
    public static Duration durationMs(String field, Long ms) {
        if (ms == null) {
            return null;
        }
        if (ms < 0 || ms > MAX_DURATION_MS) {
            throw new InvalidArgumentException(
                    field, field + " must be from 0 to " + MAX_DURATION_MS + " milliseconds, got " + ms);
        }
        return Duration.ofMillis(ms);
    }

    /**
     * Checks that a command line and environment fit what a process can be given.
     *
     * @param argv the command line, or {@code null}
     * @param env the environment, or {@code null}
     * @param envField the name of the environment's field ({@code env})
     * @throws InvalidArgumentException naming {@code argv} or the environment's field when they are too large
     */
    public static void checkArgvEnvSize(java.util.List<String> argv, Map<String, String> env, String envField) {
        long argvBytes = 0;
        if (argv != null) {
            for (String a : argv) {
                argvBytes += utf8Length(a) + 1;
            }
        }
        long envBytes = 0;
        if (env != null) {
            for (Map.Entry<String, String> e : env.entrySet()) {
                envBytes += utf8Length(e.getKey()) + utf8Length(e.getValue()) + 2;
            }
        }
        if (argvBytes + envBytes <= MAX_ARGV_ENV_BYTES) {
            return;
        }
        String field = argvBytes > envBytes ? "argv" : envField;
        throw new InvalidArgumentException(
                field,
                field + " is too large: argv and the environment may take " + MAX_ARGV_ENV_BYTES
                        + " bytes together, got " + (argvBytes + envBytes));
    }

    private static long utf8Length(String s) {
        if (s == null) {
            return 0;
        }
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            n += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
        }
        return n;
    }

    /**
     * A duration as whole milliseconds, rounded up.
     *
     * @param d a duration or {@code null}
     * @return the milliseconds, or {@code null}
     */
    public static Long millis(Duration d) {
        if (d == null) {
            return null;
        }
        long ms = d.toMillis();
        return d.minusMillis(ms).isZero() ? ms : ms + 1;
    }

    /**
     * Parses a JSON request body strictly.
     *
     * @param bytes the document
     * @return the tree
     * @throws MalformedJsonException when the bytes are not JSON
     */
    public static JsonNode parse(byte[] bytes) {
        try {
            JsonNode n = MAPPER.readTree(bytes);
            if (n == null || n.isMissingNode()) {
                throw new MalformedJsonException("the request body is empty; a JSON object was expected");
            }
            return n;
        } catch (IOException e) {
            throw new MalformedJsonException("the request body is not valid JSON: " + firstLine(e.getMessage()));
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** A request body that is not the JSON it should be. */
    public static final class MalformedJsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * Creates the exception.
         *
         * @param message what is wrong
         */
        public MalformedJsonException(String message) {
            super(message);
        }
    }

    /**
     * Reads a small JSON body for an error, tolerating anything.
     *
     * @param bytes the body
     * @return the tree, or {@code null}
     */
    public static JsonNode lenient(byte[] bytes) {
        try {
            return bytes == null || bytes.length == 0 ? null : MAPPER.readTree(bytes);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * The compact UTF-8 JSON of a tree or a wire record.
     *
     * @param body the tree or record
     * @return the bytes
     */
    public static byte[] bytes(Object body) {
        try {
            return MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Makes and caches the binding of a type now (off an event loop), so that binding it later takes no lock.
     *
     * @param type the record
     */
    static void prepare(Class<?> type) {
        MAPPER.readerFor(type); // fetches the root deserializer eagerly (EAGER_DESERIALIZER_FETCH)
    }

    /**
     * Binds a JSON value to a wire record.
     *
     * @param json the value, usually an object
     * @param type the record
     * @param <T> its type
     * @return the record
     * @throws InvalidArgumentException naming the field and the value that do not fit the record ({@code body} when
     *     the value itself is not an object)
     */
    public static <T> T bind(JsonNode json, Class<T> type) {
        try {
            T value = MAPPER.treeToValue(json, type);
            if (value == null) {
                // a JSON null (or nothing) binds to no record at all: refused here, not dereferenced by the caller
                throw new InvalidArgumentException(
                        "body",
                        "body must be a JSON object, got "
                                + (json == null || json.isMissingNode() ? "nothing" : kind(json)));
            }
            return value;
        } catch (JsonMappingException e) {
            throw invalid(e, json);
        } catch (JsonProcessingException e) {
            throw new InvalidArgumentException("body", "body cannot be read: " + firstLine(e.getOriginalMessage()));
        }
    }

    /** The error for a value that did not bind: which field, what it should be, what it was. */
    private static InvalidArgumentException invalid(JsonMappingException e, JsonNode root) {
        StringBuilder field = new StringBuilder();
        JsonNode value = root;
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (field.isEmpty()) {
                    field.append(ref.getFieldName());
                } else {
                    field.append('[').append(ref.getFieldName()).append(']');
                }
                value = value == null ? null : value.get(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                field.append('[').append(ref.getIndex()).append(']');
                value = value == null ? null : value.get(ref.getIndex());
            }
        }
        String name = field.isEmpty() ? "body" : field.toString();
        return new InvalidArgumentException(name, name + " " + expectation(name, targetType(e), value));
    }

    private static Class<?> targetType(JsonMappingException e) {
        if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
            return m.getTargetType();
        }
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
            if (c instanceof InputCoercionException ic && ic.getTargetType() != null) {
                return ic.getTargetType();
            }
        }
        return Object.class;
    }

    /** What a value of this type must be, and what it was: the wording of the readers this replaced. */
    private static String expectation(String field, Class<?> type, JsonNode v) {
        if (type == String.class) {
            return "must be a string, got " + kind(v);
        }
        if (type == Long.class || type == long.class || type == Integer.class || type == int.class) {
            return field.endsWith("Ms") || field.equals("ms")
                    ? "must be a whole number of milliseconds, got " + v
                    : "must be a whole number, got " + v;
        }
        if (type == Boolean.class || type == boolean.class) {
            return "must be true or false, got " + v;
        }
        if (type == Instant.class) {
            return "must be an ISO-8601 instant, got " + v;
        }
        if (type.isEnum()) {
            return v != null && v.isTextual()
                    ? "has an unknown value: '" + v.asText() + "'"
                    : "must be a string, got " + kind(v);
        }
        if (Map.class.isAssignableFrom(type)) {
            return "must be an object of strings, got " + kind(v);
        }
        if (Collection.class.isAssignableFrom(type) || type.isArray()) {
            return "must be an array of strings, got " + kind(v);
        }
        if (type.isRecord()) {
            return "must be a JSON object, got " + kind(v);
        }
        return "is not valid: " + v;
    }

    /**
     * The kind of a JSON value, as errors name it.
     *
     * @param n the value, or {@code null} for none
     * @return {@code string}, {@code number}, {@code object}... or {@code nothing}
     */
    static String kind(JsonNode n) {
        return n == null ? "nothing" : n.getNodeType().name().toLowerCase(Locale.ROOT);
    }

    /**
     * Checks that no element of a list of strings is {@code null}.
     *
     * @param field the field's name
     * @param values the values, or {@code null}
     * @return the values
     * @throws InvalidArgumentException naming the element ({@code argv[2]})
     */
    static List<String> noNulls(String field, List<String> values) {
        if (values != null) {
            for (int i = 0; i < values.size(); i++) {
                if (values.get(i) == null) {
                    throw new InvalidArgumentException(
                            field + "[" + i + "]", field + "[" + i + "] must be a string, got null");
                }
            }
        }
        return values;
    }

    /**
     * Checks that no value of an object of strings is {@code null}.
     *
     * @param field the field's name
     * @param values the values, or {@code null}
     * @return the values, or an empty map for {@code null}
     * @throws InvalidArgumentException naming the entry ({@code env[HOME]})
     */
    static Map<String, String> noNulls(String field, Map<String, String> values) {
        if (values == null) {
            return Map.of();
        }
        for (Map.Entry<String, String> e : values.entrySet()) {
            if (e.getValue() == null) {
                throw new InvalidArgumentException(
                        field + "[" + e.getKey() + "]", field + "[" + e.getKey() + "] must be a string, got null");
            }
        }
        return values;
    }

    /** Instants as ISO-8601 strings; anything else fails naming the value. */
    private static final class InstantDeserializer extends StdScalarDeserializer<Instant> {
        private static final long serialVersionUID = 1L;

        InstantDeserializer() {
            super(Instant.class);
        }

        @Override
        public Instant deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (!p.hasToken(com.fasterxml.jackson.core.JsonToken.VALUE_STRING)) {
                return (Instant) ctxt.handleUnexpectedToken(Instant.class, p);
            }
            String text = p.getText();
            try {
                return Instant.parse(text);
            } catch (DateTimeParseException e) {
                throw ctxt.weirdStringException(text, Instant.class, "not an ISO-8601 instant");
            }
        }
    }
}
