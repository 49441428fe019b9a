package dev.sandbox;

/**
 * A change seen by {@link SandboxFiles#watch(String, boolean)}, or the watch's {@link Kind#READY} signal. Which
 * change gives which events is the table on {@link SandboxFiles#watch(String, boolean)}.
 *
 * <pre>{@code
 * session.files().watch("out")
 *     .filter(e -> e.kind() == FileEvent.Kind.CREATED)
 *     .subscribe(e -> System.out.println("new file " + e.path()));
 * }</pre>
 *
 * @param kind what happened
 * @param path the absolute path of the file that changed (the watched directory itself for {@link Kind#READY} and
 *     {@link Kind#OVERFLOW})
 */
public record FileEvent(Kind kind, String path) {

    /** Kinds of change. */
    public enum Kind {
        /** The file was created (or moved in). */
        CREATED,
        /** The file's content or metadata changed, or the SDK's atomic write replaced it. */
        MODIFIED,
        /** The file was deleted (or moved out). */
        DELETED,
        /** Events were lost because they came faster than they were consumed; list the directory again. */
        OVERFLOW,
        /**
         * The watch is live: emitted exactly once, first, with the watched directory's absolute path; every change
         * made after it is reported.
         */
        READY
    }
}
