package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.command.InspectVolumeResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import dev.sandbox.InvalidArgumentException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Labels added to Docker sessions after their create. A container's labels cannot change once it exists, and the
 * daemon's archive API (a file in some container) costs tens of milliseconds a call; a volume's labels are written and
 * listed in about a millisecond. So each addition is recorded as an empty named volume ({@code
 * dev-sandbox-labels-<session>-<random>}, no data, mounted nowhere) whose labels say whose it is ({@value #OF}), when it
 * was made ({@value #AT}, epoch milliseconds) and every user label the session has ({@value #TEXT}: lines of {@code
 * key=value}, percent-encoded). The newest volume of a session wins; older ones are removed by the writer. {@code list}
 * and {@code attach} read them all with one volume listing. A session's volumes are removed with it, and a provider's
 * sweep removes those of sessions that are gone (a dead JVM's). A sandbox cannot reach them (the daemon's socket is in
 * no session); what is read back is bounded and checked all the same, since any program with the socket can make
 * volumes. Internal: not part of the public API.
 */
final class LabelVolumes {
    private static final Logger LOG = LoggerFactory.getLogger(LabelVolumes.class);

    /** The volume label naming the session. */
    static final String OF = DockerControl.INTERNAL_PREFIX + "labels-of";
    /** The volume label holding the epoch milliseconds of the addition. */
    static final String AT = DockerControl.INTERNAL_PREFIX + "labels-at";
    /** The volume label holding the session's labels, encoded. */
    static final String TEXT = DockerControl.INTERNAL_PREFIX + "labels";
    /** The prefix of the volumes' names. */
    static final String NAME_PREFIX = "dev-sandbox-labels-";
    /** The largest encoded labels of a session. */
    static final int MAX_TEXT = 64 * 1024;
    /** How old a gone session's volume must be before a sweep removes it (its session may still be starting). */
    static final long SWEEP_AGE_MILLIS = 60_000;

    private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final DockerControl control;

    LabelVolumes(DockerControl control) {
        this.control = control;
    }

    /** One recorded addition, as read back. */
    record Record(String volume, String sessionId, long at, Map<String, String> labels) {}

    /**
     * Records every user label a session has after an addition; blocking.
     *
     * @param sessionId the session
     * @param labels its user labels
     * @throws InvalidArgumentException when they do not fit in {@value #MAX_TEXT} characters once encoded
     */
    void write(String sessionId, Map<String, String> labels) {
        String text = encode(labels);
        String name = NAME_PREFIX + sessionId + "-" + HexFormat.of().formatHex(randomBytes());
        long at = System.currentTimeMillis();
        try {
            control.client()
                    .createVolumeCmd()
                    .withName(name)
                    .withLabels(Map.of(OF, sessionId, AT, Long.toString(at), TEXT, text))
                    .exec();
        } catch (RuntimeException e) {
            throw control.translate("record the labels of session " + sessionId, e);
        }
        // older additions of this session (this client's or another's) go: the newest is read anyway
        for (Record r : read(Map.of(OF, sessionId))) {
            if (r.sessionId().equals(sessionId) && !r.volume().equals(name) && r.at() <= at) {
                remove(r.volume());
            }
        }
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[6];
        RANDOM.nextBytes(b);
        return b;
    }

    /**
     * The labels added to sessions, by session id, the newest addition of each; blocking.
     *
     * @return labels by session id
     */
    Map<String, Map<String, String>> readAll() {
        return newest(read(Map.of()));
    }

    /**
     * The labels of each session's newest record (the later time; the greater volume name between equal times).
     *
     * @param records the records
     * @return labels by session id
     */
    static Map<String, Map<String, String>> newest(List<Record> records) {
        Map<String, Record> newest = new LinkedHashMap<>();
        for (Record r : records) {
            newest.merge(
                    r.sessionId(),
                    r,
                    (a, b) -> b.at() > a.at() || b.at() == a.at() && b.volume().compareTo(a.volume()) > 0 ? b : a);
        }
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        newest.forEach((id, r) -> out.put(id, r.labels()));
        return out;
    }

    /** Removes every recorded addition of a session; blocking, best effort (a sweep removes what is left). */
    void removeAll(String sessionId) {
        try {
            for (Record r : read(Map.of(OF, sessionId))) {
                remove(r.volume());
            }
        } catch (RuntimeException e) {
            LOG.debug("could not remove the label volumes of session {}: {}", sessionId, e.toString());
        }
    }

    /**
     * Removes the records of sessions that are gone, once they are older than {@link #SWEEP_AGE_MILLIS}; blocking.
     *
     * @param alive the sessions the daemon still has
     */
    void sweep(Set<String> alive) {
        long now = System.currentTimeMillis();
        for (Record r : read(Map.of())) {
            if (!alive.contains(r.sessionId()) && now - r.at() > SWEEP_AGE_MILLIS) {
                remove(r.volume());
            }
        }
    }

    private List<Record> read(Map<String, String> filter) {
        List<InspectVolumeResponse> volumes;
        try {
            volumes = control.client()
                    .listVolumesCmd()
                    .withFilter(
                            "label",
                            filter.isEmpty()
                                    ? List.of(OF)
                                    : filter.entrySet().stream()
                                            .map(e -> e.getKey() + "=" + e.getValue())
                                            .toList())
                    .exec()
                    .getVolumes();
        } catch (RuntimeException e) {
            throw control.translate("list the recorded labels of sessions", e);
        }
        return records(volumes == null ? List.of() : volumes);
    }

    /**
     * The records among listed volumes: those named and labelled as this class makes them, with a valid session id,
     * time and text of at most {@value #MAX_TEXT} characters; anything else is skipped.
     *
     * @param volumes what the daemon listed
     * @return the records
     */
    static List<Record> records(Collection<InspectVolumeResponse> volumes) {
        return volumes.stream()
                .map(v -> record(v.getName(), v.getLabels()))
                .filter(java.util.Objects::nonNull)
                .toList();
    }

    /**
     * One volume as a record, or {@code null} when it is not one this class made.
     *
     * @param name the volume's name
     * @param labels its labels
     * @return the record, or {@code null}
     */
    static Record record(String name, Map<String, String> labels) {
        if (name == null || labels == null || !name.startsWith(NAME_PREFIX)) {
            return null;
        }
        String id = labels.get(OF);
        String at = labels.get(AT);
        String text = labels.get(TEXT);
        if (id == null
                || !SESSION_ID.matcher(id).matches()
                || !name.startsWith(NAME_PREFIX + id + "-")
                || at == null
                || !at.matches("\\d{1,18}")
                || text == null
                || text.length() > MAX_TEXT) {
            return null;
        }
        return new Record(name, id, Long.parseLong(at), decode(text));
    }

    private void remove(String volume) {
        try {
            control.client().removeVolumeCmd(volume).exec();
        } catch (NotFoundException | ConflictException e) {
            // gone already, or (never: nothing mounts it) in use
        } catch (RuntimeException e) {
            LOG.debug("could not remove the label volume {}: {}", volume, e.toString());
        }
    }

    /**
     * A session's labels as the text of {@value #TEXT}.
     *
     * @param labels the user's labels
     * @return the text
     * @throws InvalidArgumentException when they do not fit in {@value #MAX_TEXT} characters
     */
    static String encode(Map<String, String> labels) {
        StringJoiner lines = new StringJoiner("\n");
        labels.forEach((k, v) -> lines.add(
                URLEncoder.encode(k, StandardCharsets.UTF_8) + "=" + URLEncoder.encode(v, StandardCharsets.UTF_8)));
        String text = lines.toString();
        if (text.length() > MAX_TEXT) {
            throw new InvalidArgumentException(
                    "labels",
                    "a Docker session's labels must fit in " + MAX_TEXT + " characters once encoded, got "
                            + text.length());
        }
        return text;
    }

    /**
     * The labels in a {@value #TEXT} text; lines that do not parse and keys of the provider's own are dropped.
     *
     * @param text the text
     * @return the labels
     */
    static Map<String, String> decode(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : text.split("\n", -1)) {
            int eq = line.indexOf('=');
            if (eq <= 0) {
                continue;
            }
            try {
                String key = URLDecoder.decode(line.substring(0, eq), StandardCharsets.UTF_8);
                String value = URLDecoder.decode(line.substring(eq + 1), StandardCharsets.UTF_8);
                if (!key.isEmpty() && !key.startsWith(DockerControl.INTERNAL_PREFIX)) {
                    out.put(key, value);
                }
            } catch (IllegalArgumentException e) {
                // a malformed escape: not a line this SDK wrote
            }
        }
        return out;
    }
}
