package dev.sandbox;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How to create a session: its name, working directory, environment, secrets and labels. Providers read their own extra
 * settings (an image, resource limits) from their own option types. Instances are immutable.
 *
 * <p>Secrets are environment variables like {@link #env()}, except that they are never logged and never shown by
 * {@link #toString()}.
 *
 * <pre>{@code
 * SessionOptions options = SessionOptions.defaults()
 *     .withEnv("LANG", "C.UTF-8")
 *     .withSecret("API_TOKEN", token)
 *     .withLabel("team", "search");
 * }</pre>
 */
public final class SessionOptions {

    /** The lifetime a session gets unless told otherwise: five minutes, as Modal's sandboxes. */
    public static final Duration DEFAULT_LIFETIME = Duration.ofMinutes(5);

    /** The longest session name, in characters: see {@link #withName(String)}. */
    public static final int MAX_NAME_LENGTH = 40;

    private static final SessionOptions DEFAULTS = new SessionOptions(
            null, Map.of(), Map.of(), Map.of(), DEFAULT_LIFETIME, null, false, null, NetworkPolicy.none(), true);

    private final @Nullable String workdir;
    private final Map<String, String> env;
    private final Map<String, String> secrets;
    private final Map<String, String> labels;
    private final @Nullable Duration lifetime;
    private final @Nullable Duration idleTimeout;
    private final boolean lifetimeChosen;
    private final @Nullable String name;
    private final NetworkPolicy network;
    private final boolean autoResume;

    private SessionOptions(
            @Nullable String workdir,
            Map<String, String> env,
            Map<String, String> secrets,
            Map<String, String> labels,
            @Nullable Duration lifetime,
            @Nullable Duration idleTimeout,
            boolean lifetimeChosen,
            @Nullable String name,
            NetworkPolicy network,
            boolean autoResume) {
        this.name = name;
        this.network = network;
        this.autoResume = autoResume;
        this.workdir = workdir;
        this.env = env;
        this.secrets = secrets;
        this.labels = labels;
        this.lifetime = lifetime;
        this.idleTimeout = idleTimeout;
        this.lifetimeChosen = lifetimeChosen;
    }

    /**
     * Options with nothing set: the provider picks a fresh workdir, no extra environment, no labels.
     *
     * @return the default options
     */
    public static SessionOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Sets the session's working directory; it must be an absolute path. For the local provider it must exist and
     * is left in place on destroy; without it a fresh temporary directory is made and deleted on destroy.
     *
     * @param workdir an absolute path
     * @return a copy with the workdir set
     */
    public SessionOptions withWorkdir(String workdir) {
        return new SessionOptions(
                workdir, env, secrets, labels, lifetime, idleTimeout, lifetimeChosen, name, network, autoResume);
    }

    /**
     * Adds an environment variable that every command of the session sees.
     *
     * @param name the name
     * @param value the value
     * @return a copy with the variable added
     */
    public SessionOptions withEnv(String name, String value) {
        return new SessionOptions(
                workdir,
                put(env, name, value),
                secrets,
                labels,
                lifetime,
                idleTimeout,
                lifetimeChosen,
                this.name,
                network,
                autoResume);
    }

    /**
     * Adds environment variables that every command of the session sees.
     *
     * @param vars names and values
     * @return a copy with the variables added
     */
    public SessionOptions withEnv(Map<String, String> vars) {
        Map<String, String> merged = env;
        for (Map.Entry<String, String> e : vars.entrySet()) {
            merged = put(merged, e.getKey(), e.getValue());
        }
        return new SessionOptions(
                workdir, merged, secrets, labels, lifetime, idleTimeout, lifetimeChosen, name, network, autoResume);
    }

    /**
     * Adds a secret environment variable: passed to every command, never logged or printed.
     *
     * @param name the variable's name
     * @param value the secret value
     * @return a copy with the secret added
     */
    public SessionOptions withSecret(String name, String value) {
        return new SessionOptions(
                workdir,
                env,
                put(secrets, name, value),
                labels,
                lifetime,
                idleTimeout,
                lifetimeChosen,
                this.name,
                network,
                autoResume);
    }

    /**
     * Adds a label, used to find sessions with {@link SandboxProvider#list(Map)}.
     *
     * @param key the label key
     * @param value the label value
     * @return a copy with the label added
     */
    public SessionOptions withLabel(String key, String value) {
        return new SessionOptions(
                workdir,
                env,
                secrets,
                put(labels, key, value),
                lifetime,
                idleTimeout,
                lifetimeChosen,
                name,
                network,
                autoResume);
    }

    /**
     * Sets how long the session may live; when it has lived this long it is destroyed, whatever it is doing. The
     * default is {@link #DEFAULT_LIFETIME}. A live session's lifetime can be changed with {@link
     * SandboxSession#setLifetime(Duration)}.
     *
     * @param lifetime a positive duration
     * @return a copy with the lifetime set
     */
    public SessionOptions withLifetime(Duration lifetime) {
        return new SessionOptions(
                workdir,
                env,
                secrets,
                labels,
                Objects.requireNonNull(lifetime, "lifetime"),
                idleTimeout,
                true,
                name,
                network,
                autoResume);
    }

    /**
     * Lets the session live until it is destroyed (or its idle timeout ends it).
     *
     * @return a copy without a lifetime limit
     */
    public SessionOptions withUnlimitedLifetime() {
        return new SessionOptions(workdir, env, secrets, labels, null, idleTimeout, false, name, network, autoResume);
    }

    /**
     * Destroys the session after this long without activity: no command started or running, no file operation.
     * None by default.
     *
     * @param idleTimeout a positive duration
     * @return a copy with the idle timeout set
     */
    public SessionOptions withIdleTimeout(Duration idleTimeout) {
        return new SessionOptions(
                workdir,
                env,
                secrets,
                labels,
                lifetime,
                Objects.requireNonNull(idleTimeout, "idleTimeout"),
                lifetimeChosen,
                name,
                network,
                autoResume);
    }

    /**
     * The session's lifetime, if limited.
     *
     * @return the lifetime, or empty for none
     */
    public Optional<Duration> lifetime() {
        return Optional.ofNullable(lifetime);
    }

    /**
     * Whether the lifetime was chosen with {@link #withLifetime(Duration)}, rather than left at {@link
     * #DEFAULT_LIFETIME} or made unlimited. A session whose lifetime was chosen is meant to outlive the client that
     * made it, until then. One without is <em>leased</em> by the providers whose sessions can outlive a JVM (Docker,
     * and a server for its clients): it ends about a lease after the last client holding it died or closed its
     * provider, whichever comes first of that and its lifetime.
     *
     * <pre>{@code
     * SessionOptions.defaults().lifetimeChosen();                               // false: leased
     * SessionOptions.defaults().withLifetime(Duration.ofHours(2)).lifetimeChosen(); // true: lives two hours
     * }</pre>
     *
     * @return {@code true} after {@link #withLifetime(Duration)}
     */
    public boolean lifetimeChosen() {
        return lifetimeChosen;
    }

    /**
     * The session's idle timeout, if any.
     *
     * @return the idle timeout, or empty for none
     */
    public Optional<Duration> idleTimeout() {
        return Optional.ofNullable(idleTimeout);
    }

    /**
     * The requested working directory, if set.
     *
     * @return the absolute path or empty
     */
    public Optional<String> workdir() {
        return Optional.ofNullable(workdir);
    }

    /**
     * The session environment.
     *
     * @return an unmodifiable map
     */
    public Map<String, String> env() {
        return env;
    }

    /**
     * The secret environment variables.
     *
     * @return an unmodifiable map
     */
    public Map<String, String> secrets() {
        return secrets;
    }

    /**
     * The labels.
     *
     * @return an unmodifiable map
     */
    public Map<String, String> labels() {
        return labels;
    }

    /**
     * Checks the options as a provider does before creating anything.
     *
     * @return these options
     * @throws InvalidArgumentException naming the field that is wrong and its value
     */
    public SessionOptions validate() {
        if (name != null) {
            validateName(name);
        }
        if (workdir != null) {
            ExecOptions.validatePath("workdir", workdir);
        }
        ExecOptions.validateEnv("env", env);
        ExecOptions.validateEnv("secrets", secrets);
        ExecOptions.validatePositive("lifetime", lifetime);
        ExecOptions.validatePositive("idleTimeout", idleTimeout);
        for (String key : labels.keySet()) {
            if (key.isEmpty()) {
                throw new InvalidArgumentException("labels", "labels has an empty key");
            }
        }
        return this;
    }

    /**
     * Names the session: a name unique among the provider's sessions (on Kubernetes, in its namespace), by which
     * {@link SandboxProvider#attachByName(String)} finds it and {@link SandboxProvider#createOrAttach(String,
     * SessionOptions)} creates it once. A second create with a name a session holds fails with {@link
     * SessionNameInUseException}; the name is free again once that session is destroyed. A provider without names
     * refuses a named create with {@link UnsupportedFeatureException} rather than ignoring the name.
     *
     * <p>A name is 1 to {@value #MAX_NAME_LENGTH} characters of lowercase ASCII letters, digits and {@code -},
     * starting and ending with a letter or digit: a DNS-1123 label (the strictest of the platforms' rules, Kubernetes
     * pod names), shorter than its 63 so that a provider's prefix still fits in a Docker container or pod name.
     * {@link #validate()} refuses any other with {@link InvalidArgumentException} naming {@code name}.
     *
     * @param name the session's name
     * @return a copy with the name set
     */
    public SessionOptions withName(String name) {
        return new SessionOptions(
                workdir,
                env,
                secrets,
                labels,
                lifetime,
                idleTimeout,
                lifetimeChosen,
                Objects.requireNonNull(name, "name"),
                network,
                autoResume);
    }

    /**
     * Sets what the session's programs may reach on the network: {@link NetworkPolicy#none()} by default, or an
     * allowlist served through the provider's egress proxy. A provider that cannot confine egress (the local
     * provider, whose commands use the host's network) refuses an allowlist with {@link
     * UnsupportedFeatureException} rather than ignoring it.
     *
     * @param network the policy
     * @return a copy with the policy set
     */
    public SessionOptions withNetwork(NetworkPolicy network) {
        Objects.requireNonNull(network, "network");
        SessionOptions o = this;
        return new SessionOptions(
                o.workdir,
                o.env,
                o.secrets,
                o.labels,
                o.lifetime,
                o.idleTimeout,
                o.lifetimeChosen,
                o.name,
                network,
                autoResume);
    }

    /**
     * The session's network policy.
     *
     * @return the policy, {@link NetworkPolicy#none()} unless set
     */
    public NetworkPolicy network() {
        return network;
    }

    /**
     * Whether a {@linkplain SandboxSession#pause() paused} session resumes by itself when it is asked to do something
     * (a command, a file operation, a port connection, a timer change): yes by default. With {@code false} such a call
     * fails with {@link SessionPausedException} until {@link SandboxSession#resume()}.
     *
     * <p>On by default because whoever holds a session (a pool's caller, an agent's tool, a server's client) should not
     * have to know that someone paused it: the call costs one resume more (tens of milliseconds on Docker) and does
     * what it says. Turn it off where a resume must be a decision (a session paused to stop it using CPU, that no
     * stray call may wake up).
     *
     * <pre>{@code
     * SessionOptions.defaults().withAutoResume(false); // calls on a paused session fail typed
     * }</pre>
     *
     * @param autoResume whether calls resume a paused session
     * @return a copy with the choice set
     */
    public SessionOptions withAutoResume(boolean autoResume) {
        return new SessionOptions(
                workdir, env, secrets, labels, lifetime, idleTimeout, lifetimeChosen, name, network, autoResume);
    }

    /**
     * Whether calls on a paused session resume it; see {@link #withAutoResume(boolean)}.
     *
     * @return {@code true} unless turned off
     */
    public boolean autoResume() {
        return autoResume;
    }

    /**
     * The session's name, if set.
     *
     * @return the name, or empty for an unnamed session
     */
    public Optional<String> name() {
        return Optional.ofNullable(name);
    }

    /**
     * Checks a session name against the rules of {@link #withName(String)}.
     *
     * @param name the name
     * @return the name
     * @throws InvalidArgumentException naming {@code name} and the value
     */
    public static String validateName(@Nullable String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidArgumentException("name", "name must not be empty, got '" + name + "'");
        }
        if (name.length() > MAX_NAME_LENGTH) {
            throw new InvalidArgumentException(
                    "name",
                    "name must be at most " + MAX_NAME_LENGTH + " characters, got " + name.length() + ": '"
                            + name.substring(0, MAX_NAME_LENGTH) + "...'");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            boolean edge = i == 0 || i == name.length() - 1;
            if (!alnum && (edge || c != '-')) {
                throw new InvalidArgumentException(
                        "name",
                        "name must be lowercase letters, digits and '-' (not first or last), got '" + printable(name)
                                + "'");
            }
        }
        return name;
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        s.codePoints().forEach(cp -> {
            if (cp < 0x20 || cp == 0x7f) {
                b.append(String.format("\\u%04x", cp));
            } else {
                b.appendCodePoint(cp);
            }
        });
        return b.toString();
    }

    private static Map<String, String> put(Map<String, String> map, String key, String value) {
        Map<String, String> copy = new LinkedHashMap<>(map);
        copy.put(Objects.requireNonNull(key, "name"), Objects.requireNonNull(value, key));
        return Collections.unmodifiableMap(copy);
    }

    @Override
    public String toString() {
        return "SessionOptions{" + (name == null ? "" : "name=" + name + ", ") + "workdir=" + workdir + ", env="
                + env.keySet() + ", secrets=" + secrets.keySet() + ", labels=" + labels + ", lifetime=" + lifetime
                + ", idleTimeout=" + idleTimeout
                + (network.mode() == NetworkPolicy.Mode.NONE ? "" : ", network=" + network)
                + (autoResume ? "" : ", autoResume=false") + "}";
    }
}
