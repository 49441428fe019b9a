package dev.sandbox.implementation.kubernetes;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.util.List;
import java.util.Set;

/**
 * What a session pod's status says, in the user's words: whether it started, why it cannot start, why it ended. The
 * status is written by the kubelet; strings from it are cut to {@link #MAX_TEXT} characters.
 */
final class PodStates {
    static final int MAX_TEXT = 300;

    /** Waiting reasons that will not resolve by themselves: the create fails at once. */
    private static final Set<String> FATAL_WAITING = Set.of(
            "ErrImagePull",
            "ImagePullBackOff",
            "ErrImageNeverPull",
            "InvalidImageName",
            "CreateContainerConfigError",
            "CreateContainerError",
            "RunContainerError");

    private PodStates() {}

    /** Where a pod is on its way to running its session container. */
    sealed interface Start {}

    /** Still being scheduled, pulled or initialised. */
    record Pending() implements Start {}

    /** The session container runs. */
    record Running() implements Start {}

    /**
     * It will not start.
     *
     * @param why in the user's words
     * @param image the image concerned, when the cause is an image
     * @param field the setting that names that image: {@code image} or {@code agentImage}
     */
    record Failed(String why, String image, String field) implements Start {}

    static Start start(Pod pod) {
        String ended = ended(pod);
        if (ended != null) {
            return new Failed(ended, null, null);
        }
        PodStatus s = pod.getStatus();
        if (s == null) {
            return new Pending();
        }
        for (ContainerStatus c : concat(s.getInitContainerStatuses(), s.getContainerStatuses())) {
            ContainerStateWaiting w = c.getState() == null ? null : c.getState().getWaiting();
            if (w != null && w.getReason() != null && FATAL_WAITING.contains(w.getReason())) {
                String image = c.getImage();
                return new Failed(
                        "its " + role(c) + " cannot start: " + w.getReason() + " for image '" + cut(image) + "'"
                                + (w.getMessage() == null ? "" : " (" + cut(w.getMessage()) + ")"),
                        image,
                        PodSpecs.INSTALL_CONTAINER.equals(c.getName()) ? "agentImage" : "image");
            }
            ContainerStateTerminated t =
                    c.getState() == null ? null : c.getState().getTerminated();
            if (t != null
                    && PodSpecs.INSTALL_CONTAINER.equals(c.getName())
                    && t.getExitCode() != null
                    && t.getExitCode() != 0) {
                return new Failed(
                        "the agent could not be installed from image '" + cut(c.getImage()) + "': exit "
                                + t.getExitCode() + (t.getMessage() == null ? "" : " (" + cut(t.getMessage()) + ")"),
                        c.getImage(),
                        "agentImage");
            }
        }
        if (s.getContainerStatuses() != null) {
            for (ContainerStatus c : s.getContainerStatuses()) {
                if (PodSpecs.CONTAINER.equals(c.getName())
                        && c.getState() != null
                        && c.getState().getRunning() != null) {
                    return new Running();
                }
            }
        }
        return new Pending();
    }

    /**
     * Why a pod ended, or {@code null} while it runs (or has not started yet).
     *
     * @param pod the pod as last seen
     * @return the cause, such as {@code its container ran out of memory (OOMKilled)}
     */
    static String ended(Pod pod) {
        PodStatus s = pod.getStatus();
        if (s == null) {
            return null;
        }
        String phase = s.getPhase();
        if ("DeadlineExceeded".equals(s.getReason())) {
            return "its pod reached its activeDeadlineSeconds (" + pod.getSpec().getActiveDeadlineSeconds()
                    + " s), enforced by the kubelet";
        }
        if ("Evicted".equals(s.getReason())) {
            return "its pod was evicted: " + cut(s.getMessage());
        }
        if (s.getContainerStatuses() != null) {
            for (ContainerStatus c : s.getContainerStatuses()) {
                ContainerStateTerminated t =
                        c.getState() == null ? null : c.getState().getTerminated();
                if (PodSpecs.CONTAINER.equals(c.getName()) && t != null) {
                    if ("OOMKilled".equals(t.getReason())) {
                        return "its container ran out of memory (OOMKilled, exit " + t.getExitCode() + ")";
                    }
                    return "its container exited with code " + t.getExitCode()
                            + (t.getReason() == null ? "" : " (" + cut(t.getReason()) + ")");
                }
            }
        }
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            return "its pod is " + phase + (s.getReason() == null ? "" : " (" + cut(s.getReason()) + ")")
                    + (s.getMessage() == null ? "" : ": " + cut(s.getMessage()));
        }
        return null;
    }

    private static String role(ContainerStatus c) {
        return PodSpecs.INSTALL_CONTAINER.equals(c.getName()) ? "agent init container" : "container";
    }

    private static List<ContainerStatus> concat(List<ContainerStatus> a, List<ContainerStatus> b) {
        if (a == null || a.isEmpty()) {
            return b == null ? List.of() : b;
        }
        if (b == null || b.isEmpty()) {
            return a;
        }
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }

    static String cut(String s) {
        if (s == null) {
            return "";
        }
        String clean = s.replaceAll("\\p{Cntrl}", " ");
        return clean.length() > MAX_TEXT ? clean.substring(0, MAX_TEXT) + "..." : clean;
    }
}
