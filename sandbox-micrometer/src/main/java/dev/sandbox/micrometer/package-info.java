/**
 * Micrometer observations of sandbox sessions: {@link dev.sandbox.micrometer.SandboxObservations#observe} wraps a
 * provider so that every session operation is an observation (timers, traces) with counters of the bytes and lines
 * it moves, and the SDK's log lines carry the caller's trace id and the session id. {@link
 * dev.sandbox.micrometer.SandboxObservationNames} lists every name and tag.
 */
package dev.sandbox.micrometer;
