package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.PortConnectionException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionNameInUseException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionPausedException;
import dev.sandbox.UnsupportedFeatureException;
import java.time.Duration;

/**
 * Errors on the wire: the {@code {"error": {"type": ..., "message": ..., ...}}} body of every error answer and of
 * in-band {@code error} events, written from an exception on the server and rebuilt into the same SDK exception on the
 * client (see the error table in {@code sandbox-server/README.md}).
 */
public final class ErrorBodies {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private ErrorBodies() {}

    private static Long millis(Duration d) {
        return WireJson.millis(d);
    }

    private static byte[] bytes(JsonNode n) {
        return WireJson.bytes(n);
    }

    /**
     * Encodes an error as {@code {"error": {"type": ..., "message": ..., ...}}}, with the fields its SDK type needs to
     * be rebuilt on the other side.
     *
     * @param t the error
     * @return the JSON object
     */
    public static ObjectNode error(Throwable t) {
        ObjectNode body = NODES.objectNode();
        ObjectNode e = body.putObject("error");
        if (t instanceof SandboxException) {
            e.put("type", typeName(t.getClass()));
        } else {
            e.put("type", "InternalError");
        }
        e.put("message", t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
        switch (t) {
            case InvalidArgumentException x -> e.put("field", x.field());
            case FileOperationException x -> {
                e.put("path", x.path());
                e.put("reason", x.reason().name());
            }
            case SessionClosedException x -> {
                e.put("sessionId", x.sessionId());
                e.put("reason", x.reason().name());
            }
            case SessionNotFoundException x -> {
                e.put("sessionId", x.sessionId());
                x.name().ifPresent(n -> e.put("name", n));
            }
            case SessionNameInUseException x -> e.put("name", x.name());
            case SessionPausedException x -> e.put("sessionId", x.sessionId());
            case PortConnectionException x -> e.put("port", x.port());
            case OffsetUnavailableException x -> {
                e.put("stream", x.stream().name());
                e.put("requested", x.requested());
                e.put("firstAvailable", x.firstAvailable());
                e.put("end", x.end());
            }
            case SandboxTimeoutException x -> e.put("timeoutMs", millis(x.timeout()));
            default -> {}
        }
        return body;
    }

    /** The SDK exception type a class is or extends: the nearest one in package {@code dev.sandbox}. */
    private static String typeName(Class<?> type) {
        Class<?> c = type;
        while (c != null && !c.getPackageName().equals("dev.sandbox")) {
            c = c.getSuperclass();
        }
        return c == null ? "SandboxException" : c.getSimpleName();
    }

    /**
     * Encodes an error of the server's own (not an SDK exception).
     *
     * @param type a type name such as {@code Unauthorized}
     * @param message the explanation
     * @return the JSON object
     */
    public static ObjectNode error(String type, String message) {
        ObjectNode body = NODES.objectNode();
        body.putObject("error").put("type", type).put("message", message);
        return body;
    }

    /**
     * Encodes an in-band error event.
     *
     * @param error the error object from {@link #error(Throwable)}
     * @return the JSON bytes
     */
    public static byte[] errorEvent(ObjectNode error) {
        ObjectNode n = NODES.objectNode();
        n.put("type", "error");
        n.set("error", error.get("error"));
        return bytes(n);
    }

    /**
     * Whether an HTTP status says the server, or a proxy before it, was overloaded or away for a moment: 408, 429,
     * 502, 503, 504.
     *
     * @param status the status
     * @return {@code true} when the same request may succeed later
     */
    public static boolean retryableStatus(int status) {
        return status == 408 || status == 429 || status == 502 || status == 503 || status == 504;
    }

    /**
     * Whether an error answer is retryable: the error object's {@code retryable} field when the server sent one,
     * else its status.
     *
     * @param error the {@code error} object, or {@code null}
     * @param status the HTTP status (0 or 500 for errors that arrive inside a stream or a socket)
     * @return {@code true} when retrying may help
     */
    public static boolean retryable(JsonNode error, int status) {
        JsonNode flag = error == null ? null : error.get("retryable");
        return flag != null && flag.isBoolean() ? flag.booleanValue() : retryableStatus(status);
    }

    /**
     * A {@link BackendException} for an error answer that is not one of the SDK's typed errors (a backend failure, a
     * limit, a proxy's error page).
     *
     * @param status the HTTP status
     * @param error the {@code error} object, or {@code null}
     * @param message the message, naming the status
     * @param cause the cause, or {@code null}
     * @return the exception, retryable as {@link #retryable} says
     */
    public static BackendException answered(int status, JsonNode error, String message, Throwable cause) {
        return new BackendException(message, cause, retryable(error, status));
    }

    /**
     * Rebuilds the SDK exception an error object stands for.
     *
     * @param body the {@code {"error": ...}} object, or anything else for an unreadable error
     * @param status the HTTP status it came with
     * @return the exception
     */
    public static RuntimeException exception(JsonNode body, int status) {
        JsonNode e = body == null ? null : body.get("error");
        if (e == null || !e.isObject()) {
            return answered(status, null, "the sandbox server answered HTTP " + status, null);
        }
        String type = e.path("type").asText("");
        String message = e.path("message").asText("");
        try {
            return switch (type) {
                case "InvalidArgumentException" ->
                    new InvalidArgumentException(e.path("field").asText(""), message);
                case "FileOperationException" ->
                    new FileOperationException(
                            e.path("path").asText(""),
                            FileOperationException.Reason.valueOf(
                                    e.path("reason").asText("IO_ERROR")),
                            message,
                            null);
                case "SessionClosedException" ->
                    new SessionClosedException(
                            e.path("sessionId").asText(""),
                            SessionEndReason.valueOf(e.path("reason").asText("TERMINATED")));
                case "SessionNotFoundException" ->
                    e.hasNonNull("name")
                            ? SessionNotFoundException.named(e.path("name").asText(""))
                            : new SessionNotFoundException(e.path("sessionId").asText(""));
                case "SessionNameInUseException" ->
                    new SessionNameInUseException(e.path("name").asText(""), retryable(e, status));
                case "PortConnectionException" ->
                    new PortConnectionException(e.path("port").asInt(0), message, null);
                case "ProcessNotFoundException" -> new RemoteProcessNotFoundException(message);
                case "OffsetUnavailableException" -> new RemoteOffsetUnavailableException(e, message);
                case "SandboxStateException" -> new SandboxStateException(message);
                case "SessionPausedException" ->
                    new SessionPausedException(e.path("sessionId").asText(""));
                case "SandboxTimeoutException" ->
                    new SandboxTimeoutException(
                            message, Duration.ofMillis(e.path("timeoutMs").asLong()));
                case "UnsupportedFeatureException" -> new RemoteUnsupportedFeatureException(message);
                case "ProcessLaunchException" -> new ProcessLaunchException(message, null, retryable(e, status));
                case "BackendException" -> answered(status, e, message, null);
                case "SandboxException" -> new SandboxException(message, null, retryable(e, status));
                default ->
                    answered(
                            status,
                            e,
                            "the sandbox server answered HTTP " + status + " " + type + ": " + message,
                            null);
            };
        } catch (IllegalArgumentException bad) {
            return answered(status, e, "the sandbox server answered HTTP " + status + " " + type + ": " + message, bad);
        }
    }

    /** A process-not-found error rebuilt with the server's message. */
    static final class RemoteProcessNotFoundException extends ProcessNotFoundException {
        private static final long serialVersionUID = 1L;
        private final String message;

        RemoteProcessNotFoundException(String message) {
            super("", "");
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }

    /** An offset error rebuilt with the server's numbers and message. */
    static final class RemoteOffsetUnavailableException extends OffsetUnavailableException {
        private static final long serialVersionUID = 1L;
        private final String message;

        RemoteOffsetUnavailableException(JsonNode e, String message) {
            super(
                    "",
                    ExecEvent.StreamKind.valueOf(e.path("stream").asText("STDOUT")),
                    e.path("requested").asLong(),
                    e.path("firstAvailable").asLong(),
                    e.path("end").asLong());
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }

    /** An unsupported-feature error rebuilt with the server's message. */
    static final class RemoteUnsupportedFeatureException extends UnsupportedFeatureException {
        private static final long serialVersionUID = 1L;
        private final String message;

        RemoteUnsupportedFeatureException(String message) {
            super("remote", "this");
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }
}
