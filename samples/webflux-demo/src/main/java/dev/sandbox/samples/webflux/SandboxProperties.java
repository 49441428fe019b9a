package dev.sandbox.samples.webflux;

import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The demo's settings, under the prefix {@code sandbox}: which provider runs the commands and how it reaches its
 * sandboxes. {@link SandboxConfiguration} turns them into the provider and says which isolation is in effect.
 *
 * <pre>{@code
 * sandbox.provider=docker
 * sandbox.docker.image=python:3.12-slim
 * sandbox.docker.runtime=runsc
 * sandbox.exec-timeout=10m
 * }</pre>
 *
 * @param provider which sandbox provider runs the commands: {@code local} (the default; host processes, no isolation),
 *     {@code docker} (a container per command) or {@code remote} (a {@code sandbox serve} server)
 * @param execTimeout how long one command may run before it is killed (exit code 124)
 * @param docker the Docker provider's settings, used when {@code provider} is {@code docker}
 * @param remote the remote provider's settings, used when {@code provider} is {@code remote}
 */
@ConfigurationProperties("sandbox")
public record SandboxProperties(
        @DefaultValue("local") String provider,
        @DefaultValue("10m") Duration execTimeout,
        @DefaultValue Docker docker,
        @DefaultValue Remote remote) {

    /**
     * The Docker provider's settings, under {@code sandbox.docker}.
     *
     * <pre>{@code
     * sandbox.docker.image=sandbox-test:busybox
     * sandbox.docker.runtime=runsc
     * sandbox.docker.pull=never
     * }</pre>
     *
     * @param image the image each command's container starts from
     * @param runtime {@code runc} (the default) or {@code runsc}, gVisor's user-space kernel
     * @param pull when to pull the image: {@code if-not-present} (the default), {@code always} or {@code never}
     */
    public record Docker(
            @DefaultValue("sandbox-test:busybox") String image,
            @DefaultValue("runc") String runtime,
            @DefaultValue("if-not-present") String pull) {}

    /**
     * The remote provider's settings, under {@code sandbox.remote}.
     *
     * <pre>{@code
     * sandbox.remote.url=http://127.0.0.1:7070
     * sandbox.remote.token-file=/etc/sandbox/token
     * }</pre>
     *
     * @param url the server's base URL, such as {@code http://127.0.0.1:7070}
     * @param tokenFile the file holding the token the server accepts (its content, without surrounding whitespace)
     */
    public record Remote(String url, Path tokenFile) {}
}
