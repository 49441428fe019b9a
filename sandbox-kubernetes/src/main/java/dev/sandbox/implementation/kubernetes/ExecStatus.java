package dev.sandbox.implementation.kubernetes;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * The final status of an exec, from its channel 3 ({@code metav1.Status} as JSON, at most {@link
 * KubeDataPlane#MAX_SIDE_CHANNEL} bytes kept). No status at all (the connection just closed) counts as success: the
 * caller decides from what it read.
 *
 * @param success whether the status said {@code Success} or there was none
 * @param reason the status reason, such as {@code NonZeroExitCode}, or empty
 * @param message the status message, or empty
 * @param exitCode the exit code for {@code NonZeroExitCode}, else -1
 */
public record ExecStatus(boolean success, String reason, String message, int exitCode) {

    static ExecStatus parse(String json) {
        if (json == null || json.isBlank()) {
            return new ExecStatus(true, "", "", -1);
        }
        Status s;
        try {
            s = Serialization.unmarshal(json, Status.class);
        } catch (RuntimeException e) {
            String shown = json.length() > 200 ? json.substring(0, 200) + "..." : json;
            return new ExecStatus(false, "Unreadable", "an unreadable status: " + shown, -1);
        }
        if (s == null || "Success".equals(s.getStatus())) {
            return new ExecStatus(true, "", "", -1);
        }
        int exit = -1;
        if (s.getDetails() != null && s.getDetails().getCauses() != null) {
            for (StatusCause c : s.getDetails().getCauses()) {
                if ("ExitCode".equals(c.getReason())) {
                    try {
                        exit = Integer.parseInt(c.getMessage());
                    } catch (NumberFormatException e) {
                        exit = -1;
                    }
                }
            }
        }
        return new ExecStatus(
                false, s.getReason() == null ? "" : s.getReason(), s.getMessage() == null ? "" : s.getMessage(), exit);
    }
}
