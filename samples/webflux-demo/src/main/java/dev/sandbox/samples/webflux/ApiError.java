package dev.sandbox.samples.webflux;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxException;

/**
 * The JSON body of an error answer, and the data of an {@code error} event.
 *
 * <pre>{@code
 * {"error":"invalid_argument","field":"command","message":"command must name a program, got an empty array"}
 * }</pre>
 *
 * @param error a short code: {@code invalid_argument}, {@code invalid_body} or {@code exec_failed}; with a 403,
 *     {@code host_not_allowed} or {@code origin_not_allowed} (see {@link RebindingGuard})
 * @param field the request field (or header, such as {@code Host}) that was rejected, or {@code null} when the error
 *     is not about one field
 * @param message a sentence for people
 */
public record ApiError(String error, String field, String message) {

    /**
     * Describes an error that ended a command's stream.
     *
     * @param error the error
     * @return its description
     */
    public static ApiError of(Throwable error) {
        if (error instanceof InvalidArgumentException invalid) {
            return new ApiError("invalid_argument", invalid.field(), invalid.getMessage());
        }
        String message = error instanceof SandboxException ? error.getMessage() : error.toString();
        return new ApiError("exec_failed", null, message);
    }
}
