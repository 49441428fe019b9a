package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNameInUseException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.UnsupportedFeatureException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Named sessions ({@link SessionOptions#withName(String)}, {@link SandboxProvider#attachByName(String)}, {@link
 * SandboxProvider#createOrAttach(String, SessionOptions)}): a provider either keeps a name unique, finds a session by
 * it (from a second provider instance too, where the test class gives one) and frees it on destroy, or says it
 * cannot with {@link UnsupportedFeatureException} and creates nothing. Bad names are refused the same way on every
 * provider.
 */
public interface NameConformance extends ConformanceBase {

    /** How many callers race in {@link #racingCreateOrAttachCallersGetOneSession()}. */
    int RACERS = 20;

    /**
     * A second provider instance reaching the same sessions as {@link #provider()} (another client of the same
     * daemon, cluster or server), to attach by name from; shared by the test class and closed by it.
     *
     * @return the second provider, or empty when the provider's sessions are its own (the local provider)
     */
    default Optional<SandboxProvider> secondProvider() {
        return Optional.empty();
    }

    /** A fresh name for one test: unique, valid, and short enough for every provider. */
    private static String freshName() {
        return "kit-" + UUID.randomUUID().toString().substring(0, 18);
    }

    /** Whether the provider refuses names; then nothing named may have been made. */
    private boolean unsupported(String name) {
        try {
            provider().attachByName(name).block(WAIT);
        } catch (UnsupportedFeatureException e) {
            assertThatThrownBy(() ->
                            provider().create(sessionOptions().withName(name)).block(WAIT))
                    .isInstanceOf(UnsupportedFeatureException.class);
            assertThat(provider()
                            .list(Map.of())
                            .filter(i -> i.name().isPresent())
                            .collectList()
                            .block(WAIT))
                    .as("sessions with a name on a provider without names")
                    .isEmpty();
            return true;
        } catch (SessionNotFoundException e) {
            return false;
        }
        throw new AssertionError("attachByName found a session named " + name + " before any was created");
    }

    /** Required: bad names are refused naming {@code name} and the value, before anything is made. */
    @Test
    default void badNamesAreRefusedNamingTheFieldAndValue() {
        List<String> bad = List.of(
                "",
                "x".repeat(SessionOptions.MAX_NAME_LENGTH + 1),
                "Upper",
                "under_score",
                "-lead",
                "trail-",
                "dot.ted",
                "sp ace",
                "nul\0",
                "caf\u00e9");
        for (String name : bad) {
            assertThatThrownBy(() -> SessionOptions.defaults().withName(name).validate())
                    .isInstanceOfSatisfying(
                            InvalidArgumentException.class,
                            e -> assertThat(e.field()).isEqualTo("name"))
                    .hasMessageContaining("name");
            assertThatThrownBy(() ->
                            provider().create(sessionOptions().withName(name)).block(WAIT))
                    .isInstanceOfAny(InvalidArgumentException.class, UnsupportedFeatureException.class);
            assertThatThrownBy(() ->
                            provider().createOrAttach(name, sessionOptions()).block(WAIT))
                    .isInstanceOfAny(InvalidArgumentException.class, UnsupportedFeatureException.class);
        }
        assertThatThrownBy(() -> SessionOptions.defaults().withName("dot.ted").validate())
                .hasMessageContaining("dot.ted");
        // the longest allowed is allowed
        SessionOptions.defaults()
                .withName("a".repeat(SessionOptions.MAX_NAME_LENGTH))
                .validate();
    }

    /** Required: a named session is found by its name (here and from a second provider), listed with it, unique. */
    @Test
    default void aNamedSessionIsFoundByNameListedAndUnique() {
        String name = freshName();
        if (unsupported(name)) {
            return;
        }
        SandboxSession s = provider().create(sessionOptions().withName(name)).block(WAIT);
        try {
            assertThat(s.name()).contains(name);
            SandboxSession again = provider().attachByName(name).block(WAIT);
            assertThat(again.id()).isEqualTo(s.id());
            assertThat(again.name()).contains(name);
            assertThat(again.run(ExecOptions.shell("echo hi")).block(WAIT).stdout())
                    .isEqualTo("hi\n");
            again.close().block(WAIT);
            assertThat(provider()
                            .list(Map.of())
                            .filter(i -> i.id().equals(s.id()))
                            .map(SessionInfo::name)
                            .collectList()
                            .block(WAIT))
                    .containsExactly(Optional.of(name));
            secondProvider().ifPresent(other -> {
                SandboxSession there = other.attachByName(name).block(WAIT);
                assertThat(there.id()).isEqualTo(s.id());
                assertThat(there.name()).contains(name);
                there.close().block(WAIT);
            });
            // a second create with the name is refused: the live holder makes it not retryable
            assertThatThrownBy(() ->
                            provider().create(sessionOptions().withName(name)).block(WAIT))
                    .isInstanceOfSatisfying(SessionNameInUseException.class, e -> {
                        assertThat(e.name()).isEqualTo(name);
                        assertThat(e.isRetryable()).isFalse();
                    });
            // a name is never an id: attach by the name and attachByName by the id find nothing
            assertThatThrownBy(() -> provider().attach(name).block(WAIT)).isInstanceOf(SessionNotFoundException.class);
            String idAsName = s.id().toLowerCase(java.util.Locale.ROOT);
            boolean validName = true;
            try {
                SessionOptions.validateName(idAsName);
            } catch (InvalidArgumentException e) {
                validName = false;
            }
            if (validName) {
                assertThatThrownBy(() -> provider().attachByName(idAsName).block(WAIT))
                        .isInstanceOf(SessionNotFoundException.class);
            }
        } finally {
            s.destroy().block(WAIT);
        }
        assertThatThrownBy(() -> provider().attachByName(name).block(WAIT))
                .isInstanceOf(SessionNotFoundException.class);
    }

    /** Required: twenty callers racing {@code createOrAttach} on one name share one session; exactly one exists. */
    @Test
    default void racingCreateOrAttachCallersGetOneSession() {
        String name = freshName();
        if (unsupported(name)) {
            return;
        }
        String mark = UUID.randomUUID().toString();
        SessionOptions options = sessionOptions().withLabel("kit-name-race", mark);
        List<SandboxSession> got = Flux.range(0, RACERS)
                .flatMap(
                        i -> Mono.defer(() -> provider().createOrAttach(name, options))
                                .subscribeOn(Schedulers.parallel()),
                        RACERS)
                .collectList()
                .block(WAIT.multipliedBy(4));
        Set<String> ids = new HashSet<>();
        got.forEach(s -> ids.add(s.id()));
        try {
            assertThat(got).hasSize(RACERS);
            assertThat(ids).as("session ids the racers got").hasSize(1);
            assertThat(provider()
                            .list(Map.of("kit-name-race", mark))
                            .map(SessionInfo::id)
                            .collectList()
                            .block(WAIT))
                    .as("sessions made by the race")
                    .containsExactlyElementsOf(ids);
        } finally {
            got.get(0).destroy().block(WAIT);
            for (SandboxSession s : got) {
                s.close().block(WAIT);
            }
        }
        // every racer's session is gone, and nothing else was left behind
        assertThat(provider().list(Map.of("kit-name-race", mark)).collectList().block(WAIT))
                .isEmpty();
    }

    /** Required: once a named session is destroyed its name can be used again, by create and createOrAttach. */
    @Test
    default void aDestroyedSessionsNameCanBeUsedAgain() {
        String name = freshName();
        if (unsupported(name)) {
            return;
        }
        SandboxSession first =
                provider().create(sessionOptions().withName(name)).block(WAIT);
        first.destroy().block(WAIT);
        SandboxSession second =
                provider().create(sessionOptions().withName(name)).block(WAIT.multipliedBy(2));
        try {
            assertThat(second.id()).isNotEqualTo(first.id());
            assertThat(provider().attachByName(name).block(WAIT).id()).isEqualTo(second.id());
        } finally {
            second.destroy().block(WAIT);
        }
        long start = System.nanoTime();
        SandboxSession third = provider().createOrAttach(name, sessionOptions()).block(WAIT.multipliedBy(2));
        try {
            assertThat(third.id()).isNotIn(first.id(), second.id());
            assertThat(third.name()).contains(name);
        } finally {
            third.destroy().block(WAIT);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(WAIT.multipliedBy(2));
    }
}
