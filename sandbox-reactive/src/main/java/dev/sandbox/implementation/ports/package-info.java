/**
 * Port forwards, shared by the providers: a listening socket on the host per forward ({@link
 * dev.sandbox.implementation.ports.ForwardListener}), a relay per accepted connection between its socket and the
 * provider's {@link dev.sandbox.implementation.ports.Dialer} ({@link
 * dev.sandbox.implementation.ports.TunnelRelay}), and the forwards of a session by handle ({@link
 * dev.sandbox.implementation.ports.PortForwards}). Internal: not part of the API.
 */
package dev.sandbox.implementation.ports;
