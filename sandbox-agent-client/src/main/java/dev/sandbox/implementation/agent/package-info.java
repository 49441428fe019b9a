/**
 * The client side of the sandbox agent protocol ({@code sandbox-agent/PROTOCOL.md}, version 1): frames ({@code
 * AgentFrames}), one multiplexed connection over any byte pipe ({@link dev.sandbox.implementation.agent.AgentConnection}
 * over an {@link dev.sandbox.implementation.agent.AgentTransport}), processes, files, watches and background
 * processes. Transport-neutral: the Docker provider runs it over {@code docker exec ... sandbox-agent relay}, and a provider
 * whose sandbox runs the agent can run it over its own pipe (module {@code sandbox-agent-client}).
 * The connection is split by job: {@code AgentConnection} (its life and stream table) hands out {@code
 * AgentProcessOps} and {@code AgentFileOps}; {@code FrameReader} routes what arrives, {@code FrameWriter} batches
 * what goes out, {@code StreamWindow} keeps a stream's credit, {@code ItemStream} delivers a stream's answers.
 * Everything the agent sends is treated as hostile: every length and count is bounded, every producing stream is
 * credited, and a malformed or over-sending agent breaks the connection with a typed error. Internal: not part of the
 * public API.
 */
package dev.sandbox.implementation.agent;
