package dev.sandbox;

import java.util.Objects;
import java.util.Optional;

/**
 * An object that decorates another of the SDK's objects, such as a {@link SandboxSession} that observes the
 * operations of the session it wraps, and says which one (like R2DBC's {@code Wrapped}).
 *
 * <p>The SDK unwraps a decorator to reach what the decorator cannot forward because it knows only the public API: the
 * sandbox server streams a command's output with the innermost session's own batching of lines, found with {@link
 * #find}. What is done through the unwrapped object does not pass the decorator, so a decorator implements this only
 * where that is acceptable, and says what it misses (the Micrometer decorator does not observe the commands the
 * server streams this way).
 *
 * <pre>{@code
 * final class TimedSession implements SandboxSession, Wrapped<SandboxSession> {
 *     private final SandboxSession inner;
 *     // ... each operation timed, then passed to inner ...
 *     public SandboxSession unwrap() { return inner; }
 * }
 * // the first TimedSession in a chain of decorators, if any
 * Optional<TimedSession> timed = Wrapped.find(session, TimedSession.class);
 * }</pre>
 *
 * @param <T> the type of the wrapped object
 */
public interface Wrapped<T> {
    /** The longest chain of wrappers {@link #find} follows. */
    int MAX_DEPTH = 16;

    /**
     * The object this one wraps.
     *
     * @return the wrapped object, never {@code null}
     */
    T unwrap();

    /**
     * Finds an object of a type in a chain of wrappers: the object itself when it is one, else the object it wraps
     * when it is a {@code Wrapped}, and so on, for at most {@link #MAX_DEPTH} wrappers.
     *
     * @param object the outermost object
     * @param type the type looked for
     * @param <E> the type looked for
     * @return the first object of the chain that is of the type, or empty when none is
     */
    static <E> Optional<E> find(Object object, Class<E> type) {
        Objects.requireNonNull(type, "type");
        Object current = object;
        for (int depth = 0; current != null && depth <= MAX_DEPTH; depth++) {
            if (type.isInstance(current)) {
                return Optional.of(type.cast(current));
            }
            if (!(current instanceof Wrapped<?> wrapped)) {
                break;
            }
            current = wrapped.unwrap();
        }
        return Optional.empty();
    }
}
