/**
 * Micrometer observations of sandbox sessions: {@link dev.sandbox.micrometer.SandboxObservations#observe} wraps a
 * provider so that every session operation is an observation (timers, traces) with counters of the bytes and lines
 * it moves, and the SDK's log lines carry the caller's trace id and the session id. {@link
 * dev.sandbox.micrometer.SandboxObservationNames} lists every name and tag.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.micrometer;

import org.jspecify.annotations.NullMarked;
