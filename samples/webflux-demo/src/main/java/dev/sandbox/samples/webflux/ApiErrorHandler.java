package dev.sandbox.samples.webflux;

import dev.sandbox.InvalidArgumentException;
import java.util.stream.Collectors;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.server.ServerWebInputException;
import tools.jackson.core.JacksonException;

/**
 * Answers bad requests with a 400 and an {@link ApiError} in JSON, whatever the request's {@code Accept} header
 * asked for.
 *
 * <pre>{@code
 * HTTP/1.1 400 Bad Request
 * Content-Type: application/json
 *
 * {"error":"invalid_argument","field":"command","message":"command must name a program, got an empty array"}
 * }</pre>
 */
@RestControllerAdvice
public class ApiErrorHandler {

    /** Created by Spring. */
    public ApiErrorHandler() {}

    /**
     * A rejected field.
     *
     * @param e the rejection
     * @return a 400 naming the field
     */
    @ExceptionHandler(InvalidArgumentException.class)
    public ResponseEntity<ApiError> invalidArgument(InvalidArgumentException e) {
        return badRequest(ApiError.of(e));
    }

    /**
     * A body that is not JSON, or JSON of the wrong shape (such as a string where an array belongs).
     *
     * @param e the decoding failure
     * @return a 400 naming the field, where the JSON parser could tell which
     */
    @ExceptionHandler(ServerWebInputException.class)
    public ResponseEntity<ApiError> invalidBody(ServerWebInputException e) {
        String field = null;
        String detail = e.getReason();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof JacksonException json) {
                detail = json.getOriginalMessage();
                if (!json.getPath().isEmpty()) {
                    field = json.getPath().stream()
                            .map(ref ->
                                    ref.getPropertyName() != null ? ref.getPropertyName() : "[" + ref.getIndex() + "]")
                            .collect(Collectors.joining("."))
                            .replace(".[", "[");
                }
                break;
            }
        }
        String message = field == null
                ? "the request body must be JSON such as {\"command\": [\"ls\", \"-l\"]}: " + detail
                : field + " has the wrong type: " + detail;
        return badRequest(new ApiError("invalid_body", field, message));
    }

    private static ResponseEntity<ApiError> badRequest(ApiError error) {
        // the content type is set here so that a client asking for text/event-stream still gets plain JSON
        return ResponseEntity.status(HttpStatus.BAD_REQUEST)
                .contentType(MediaType.APPLICATION_JSON)
                .body(error);
    }
}
