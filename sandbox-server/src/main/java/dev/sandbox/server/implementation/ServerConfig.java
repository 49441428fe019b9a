package dev.sandbox.server.implementation;

import java.time.Duration;

/**
 * The server's settings.
 *
 * @param host the address to bind
 * @param port the port to bind (0 for any free port)
 * @param tokenDigests the SHA-256 digests of the bearer tokens by name, each token a tenant
 * @param maxSessions the most live sessions created through the server
 * @param maxExecs the most commands running through the server
 * @param maxJsonBytes the largest JSON request body
 * @param maxUploadBytes the largest file upload
 * @param execWindowBytes the unacknowledged bytes kept per streaming exec for a resume
 * @param resumeTimeout how long a detached exec waits for its client before it is killed
 * @param heartbeat how often quiet streams send a heartbeat
 * @param stdinTimeout how long a command and its stdin upload wait for each other
 * @param shutdownTimeout how long a graceful stop waits for running requests
 * @param maxConnections the most open connections
 * @param headTimeout the longest a request head may take to arrive once it started
 * @param authTimeout the longest a connection may stay open without presenting a valid token
 * @param workdirRoot the directory that host workdirs chosen by clients must be under (resolved)
 * @param lease how long a session created without a lifetime lives without a renewal from its client
 */
public record ServerConfig(
        String host,
        int port,
        java.util.Map<String, byte[]> tokenDigests,
        int maxSessions,
        int maxExecs,
        int maxJsonBytes,
        long maxUploadBytes,
        int execWindowBytes,
        Duration resumeTimeout,
        Duration heartbeat,
        Duration stdinTimeout,
        Duration shutdownTimeout,
        int maxConnections,
        Duration headTimeout,
        Duration authTimeout,
        java.nio.file.Path workdirRoot,
        Duration lease) {}
