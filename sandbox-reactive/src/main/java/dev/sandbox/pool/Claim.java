package dev.sandbox.pool;

import dev.sandbox.InvalidArgumentException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What a caller makes of a warm session when it takes it from a {@link SandboxPool}: environment variables and a
 * working directory for every command it runs, a lifetime and an idle timeout counted from the claim, and files put in
 * place before the session is handed out, and labels its provider's {@code list} and {@code attach} find it by. None of it needs a new sandbox, so a customised claim is as fast as a plain
 * one; what does (image, limits, network, runtime) belongs to the pool's provider and template.
 *
 * <pre>{@code
 * Claim claim = Claim.defaults()
 *     .withEnv("TENANT", "acme")
 *     .withWorkdir("/work")
 *     .withFile("/work/input.json", json)
 * .withLabel("tenant", "acme")
 *     .withLifetime(Duration.ofMinutes(10));
 * pool.acquire(claim).subscribe(session -> ...);
 * }</pre>
 */
public final class Claim {
    private static final Claim DEFAULTS = new Claim(Map.of(), null, null, null, Map.of(), Map.of());

    private final Map<String, String> env;
    private final @Nullable String workdir;
    private final @Nullable Duration lifetime;
    private final @Nullable Duration idleTimeout;
    private final Map<String, byte[]> files;
    private final Map<String, String> labels;

    private Claim(
            Map<String, String> env,
            @Nullable String workdir,
            @Nullable Duration lifetime,
            @Nullable Duration idleTimeout,
            Map<String, byte[]> files,
            Map<String, String> labels) {
        this.env = env;
        this.workdir = workdir;
        this.lifetime = lifetime;
        this.idleTimeout = idleTimeout;
        this.files = files;
        this.labels = labels;
    }

    /**
     * A claim that changes nothing: the session as the pool's template made it.
     *
     * @return the plain claim
     */
    public static Claim defaults() {
        return DEFAULTS;
    }

    /**
     * Adds an environment variable to every command, background process and terminal started through the claimed
     * session (a command's own variables win).
     *
     * @param name the variable's name, not empty, without {@code =}
     * @param value its value
     * @return a copy with the variable
     */
    public Claim withEnv(String name, String value) {
        Objects.requireNonNull(value, "value");
        if (name == null || name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
            throw new InvalidArgumentException(
                    "env", "an environment variable's name must be non-empty without '=' or NUL, got '" + name + "'");
        }
        Map<String, String> m = new LinkedHashMap<>(env);
        m.put(name, value);
        return new Claim(Collections.unmodifiableMap(m), workdir, lifetime, idleTimeout, files, labels);
    }

    /**
     * Sets the working directory of every command started without one (made when missing).
     *
     * @param workdir an absolute path inside the sandbox
     * @return a copy with the working directory
     */
    public Claim withWorkdir(String workdir) {
        if (workdir == null || !workdir.startsWith("/") || workdir.indexOf('\0') >= 0) {
            throw new InvalidArgumentException("workdir", "workdir must be an absolute path, got '" + workdir + "'");
        }
        return new Claim(env, workdir, lifetime, idleTimeout, files, labels);
    }

    /**
     * Sets how long the claimed session lives from the claim on; without it the template's lifetime applies from the
     * claim on, and without that the session lives until it is released (leased meanwhile, like any session).
     *
     * @param lifetime a positive duration
     * @return a copy with the lifetime
     */
    public Claim withLifetime(Duration lifetime) {
        return new Claim(env, workdir, positive("lifetime", lifetime), idleTimeout, files, labels);
    }

    /**
     * Sets the claimed session's idle timeout.
     *
     * @param idleTimeout a positive duration
     * @return a copy with the idle timeout
     */
    public Claim withIdleTimeout(Duration idleTimeout) {
        return new Claim(env, workdir, lifetime, positive("idleTimeout", idleTimeout), files, labels);
    }

    /**
     * Puts a file in the session before it is handed out (its directory made when missing).
     *
     * @param path a path inside the sandbox, absolute or relative to the session's working directory (as {@link
     *     dev.sandbox.SandboxFiles} resolves it)
     * @param content the file's bytes (copied)
     * @return a copy with the file
     */
    public Claim withFile(String path, byte[] content) {
        Objects.requireNonNull(content, "content");
        if (path == null || path.isEmpty() || path.endsWith("/") || path.indexOf('\0') >= 0) {
            throw new InvalidArgumentException("files", "a file's path must name a file, got '" + path + "'");
        }
        Map<String, byte[]> m = new LinkedHashMap<>(files);
        m.put(path, content.clone());
        return new Claim(env, workdir, lifetime, idleTimeout, Collections.unmodifiableMap(m), labels);
    }

    /**
     * Adds a label to the claimed session, as {@link dev.sandbox.SandboxSession#addLabels} does: the session's
     * {@code labels()}, and its provider's {@code list} and {@code attach}, show it, so that the caller (or another
     * client) finds the session by it. Needs a provider that can label a running session (local, Docker, Kubernetes);
     * on one that cannot, the claim fails with {@link dev.sandbox.UnsupportedFeatureException} and the session is given
     * back.
     *
     * @param key the label's key, not empty
     * @param value its value
     * @return a copy with the label
     */
    public Claim withLabel(String key, String value) {
        Objects.requireNonNull(value, "value");
        if (key == null || key.isEmpty()) {
            throw new InvalidArgumentException("labels", "labels must not have an empty key, got '" + key + "'");
        }
        Map<String, String> m = new LinkedHashMap<>(labels);
        m.put(key, value);
        return new Claim(env, workdir, lifetime, idleTimeout, files, Collections.unmodifiableMap(m));
    }

    private static Duration positive(String field, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + d);
        }
        return d;
    }

    /**
     * The environment added to every command.
     *
     * @return names and values
     */
    public Map<String, String> env() {
        return env;
    }

    /**
     * The working directory of commands started without one.
     *
     * @return the directory, or empty
     */
    public Optional<String> workdir() {
        return Optional.ofNullable(workdir);
    }

    /**
     * The lifetime counted from the claim.
     *
     * @return the lifetime, or empty for the template's
     */
    public Optional<Duration> lifetime() {
        return Optional.ofNullable(lifetime);
    }

    /**
     * The idle timeout.
     *
     * @return the idle timeout, or empty for the template's
     */
    public Optional<Duration> idleTimeout() {
        return Optional.ofNullable(idleTimeout);
    }

    /**
     * The files put in place at the claim.
     *
     * @return paths and contents (do not change the arrays)
     */
    public Map<String, byte[]> files() {
        return files;
    }

    /**
     * The labels added to the claimed session.
     *
     * @return keys and values
     */
    public Map<String, String> labels() {
        return labels;
    }

    @Override
    public String toString() {
        return "Claim{env=" + env.keySet() + ", workdir=" + workdir + ", lifetime=" + lifetime + ", idleTimeout="
                + idleTimeout + ", files=" + files.keySet() + ", labels=" + labels + "}";
    }
}
