package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.command.InspectVolumeResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The agent volumes of other agent builds on one daemon, and which of them may go.
 *
 * <p>Several programs share a daemon: two services, a CI job beside a developer's run, two SDK versions. Each
 * installs its own agent build into its own volume and relies on it between its containers, when nothing mounts it.
 * A volume that no container mounts at this moment is therefore no sign that nobody needs it: removing it pulls it
 * from under a live program (Docker then makes an empty volume of that name when the program's next container mounts
 * it, and every session of that program fails). So another build's volume goes only when, besides no container
 * mounting it (the daemon refuses to remove one that is mounted, by a running or a stopped container), it was
 * installed more than {@link #KEEP_FOR} ago, as its {@value #INSTALLED_LABEL} label says (the daemon's creation time
 * for the volumes of SDK versions that did not set it).
 *
 * <p>Why an install time and not a lease that live programs renew: Docker cannot change a volume's labels, and
 * anything renewable (a file in the volume, a holder container per program) costs every program a container per
 * renewal and leaks when a JVM dies. A day is far longer than the gaps between one program's containers in practice;
 * a program that lives longer still, and loses its volume in a quiet moment, notices before its next session and
 * installs again ({@link AgentInstaller#ensure}). Internal: not part of the public API.
 */
final class AgentVolumes {
    private static final Logger LOG = LoggerFactory.getLogger(AgentVolumes.class);

    /** The label on an agent volume with the epoch second its installer made it. */
    static final String INSTALLED_LABEL = "dev.sandbox.agent.installed-at";

    /** How long after its install another build's unmounted agent volume is kept. */
    static final Duration KEEP_FOR = Duration.ofDays(1);

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern CREATED_AT = Pattern.compile("\"CreatedAt\":\"([^\"]{1,64})\"");
    private static final int MAX_INSPECT = 64 * 1024;

    private AgentVolumes() {}

    /**
     * The labels of a new agent volume.
     *
     * @param volume the volume's name
     * @param now the install time
     * @return the labels
     */
    static Map<String, String> labels(String volume, Instant now) {
        return Map.of(AgentInstaller.VOLUME_LABEL, volume, INSTALLED_LABEL, Long.toString(now.getEpochSecond()));
    }

    /**
     * Removes the agent volumes of other builds (named {@code prefix...}, labelled {@value
     * AgentInstaller#VOLUME_LABEL}) installed more than {@link #KEEP_FOR} before {@code now} that no container mounts;
     * keeps every volume whose install time cannot be told. Failures are logged, never thrown: this is housekeeping.
     *
     * @param control the daemon
     * @param data the daemon's data plane, to read a volume's creation time
     * @param prefix the prefix of the agent volumes' names
     * @param current this build's volume, always kept
     * @param now the time to measure ages from
     * @return the names of the volumes removed
     */
    static List<String> removeOlderBuilds(
            DockerControl control, DockerDataPlane data, String prefix, String current, Instant now) {
        List<String> removed = new ArrayList<>();
        List<InspectVolumeResponse> volumes;
        try {
            volumes = control.client()
                    .listVolumesCmd()
                    .withFilter("label", List.of(AgentInstaller.VOLUME_LABEL))
                    .exec()
                    .getVolumes();
        } catch (RuntimeException e) {
            LOG.debug("could not list older agent volumes: {}", e.toString());
            return removed;
        }
        for (InspectVolumeResponse v : volumes == null ? List.<InspectVolumeResponse>of() : volumes) {
            String name = v.getName();
            if (name == null || !name.startsWith(prefix) || name.equals(current)) {
                continue;
            }
            Instant installed = installedAt(v, data);
            if (installed == null || installed.plus(KEEP_FOR).isAfter(now)) {
                LOG.debug("agent volume {} stays: installed at {}, less than {} ago", name, installed, KEEP_FOR);
                continue;
            }
            try {
                control.client().removeVolumeCmd(name).exec();
                removed.add(name);
                LOG.debug("removed agent volume {} of another build, installed at {}", name, installed);
            } catch (RuntimeException e) {
                LOG.debug("agent volume {} stays (in use?): {}", name, e.toString());
            }
        }
        return removed;
    }

    /** When a volume was installed: its label, else the daemon's creation time; {@code null} when neither tells. */
    private static Instant installedAt(InspectVolumeResponse v, DockerDataPlane data) {
        String label = v.getLabels() == null ? null : v.getLabels().get(INSTALLED_LABEL);
        if (label != null) {
            try {
                return Instant.ofEpochSecond(Long.parseLong(label));
            } catch (NumberFormatException | java.time.DateTimeException e) {
                return null;
            }
        }
        return createdAt(v.getName(), data);
    }

    /** The daemon's {@code CreatedAt} of a volume (docker-java does not read it); {@code null} when unknown. */
    private static Instant createdAt(String volume, DockerDataPlane data) {
        String json;
        try {
            json = data.http()
                    .get()
                    .uri("/volumes/" + volume)
                    .responseSingle((resp, body) -> body.asByteArray()
                            .defaultIfEmpty(new byte[0])
                            .map(b -> resp.status().code() == 200 && b.length <= MAX_INSPECT
                                    ? new String(b, StandardCharsets.UTF_8)
                                    : ""))
                    .onErrorResume(e -> Mono.just(""))
                    .block(TIMEOUT);
        } catch (RuntimeException e) {
            return null;
        }
        Matcher m = CREATED_AT.matcher(json == null ? "" : json);
        if (!m.find()) {
            return null;
        }
        try {
            return OffsetDateTime.parse(m.group(1)).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
