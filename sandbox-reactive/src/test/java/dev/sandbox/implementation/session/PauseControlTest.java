package dev.sandbox.implementation.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionPausedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Pause and resume asked from many threads at once: the freezes and thaws the provider sees alternate, starting with a
 * freeze, and the state the last call asked for is the state left; a failed freeze leaves the session running.
 */
class PauseControlTest {
    private final List<SessionEndReason> ends = new CopyOnWriteArrayList<>();
    private final SessionTimers timers = new SessionTimers("s-1", () -> 0, ends::add);

    @Test
    void racingPausesAndResumesFreezeAndThawInTurnAndLeaveTheLastAskedState() {
        List<String> seen = new CopyOnWriteArrayList<>();
        AtomicBoolean frozen = new AtomicBoolean();
        PauseControl pauses = new PauseControl(
                "s-1",
                timers,
                () -> Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(3)))
                        .doOnNext(x -> {
                            seen.add("freeze");
                            assertThat(frozen.getAndSet(true))
                                    .as("frozen twice")
                                    .isFalse();
                        })
                        .then(),
                () -> Mono.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(3)))
                        .doOnNext(x -> {
                            seen.add("thaw");
                            assertThat(frozen.getAndSet(false))
                                    .as("thawed while running")
                                    .isTrue();
                        })
                        .then());
        List<Mono<Void>> calls = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            calls.add(i % 3 == 0 ? pauses.resume() : pauses.pause());
        }
        Flux.fromIterable(calls)
                .flatMap(m -> m.subscribeOn(Schedulers.parallel()), 16)
                .then()
                .block(Duration.ofSeconds(30));
        pauses.pause().block(Duration.ofSeconds(5));
        assertThat(pauses.paused()).isTrue();
        assertThat(frozen).isTrue();
        for (int i = 0; i < seen.size(); i++) {
            assertThat(seen.get(i)).as("step %d of %s", i, seen).isEqualTo(i % 2 == 0 ? "freeze" : "thaw");
        }
        pauses.resume().then(pauses.resume()).block(Duration.ofSeconds(5));
        assertThat(frozen).isFalse();
        assertThat(pauses.beforeCall()).as("nothing to wait for while it runs").isNull();
        timers.stop();
    }

    @Test
    void aFailedFreezeLeavesTheSessionRunningAndCallsWithoutAutoResumeFailTyped() {
        AtomicBoolean fail = new AtomicBoolean(true);
        PauseControl pauses = new PauseControl(
                "s-2",
                timers,
                () -> fail.get() ? Mono.error(new IllegalStateException("no freezer")) : Mono.empty(),
                Mono::empty);
        assertThatThrownBy(() -> pauses.pause().block(Duration.ofSeconds(5))).hasMessageContaining("no freezer");
        assertThat(pauses.paused()).isFalse();
        assertThat(pauses.beforeCall()).isNull();
        fail.set(false);
        pauses.autoResume(false);
        pauses.pause().block(Duration.ofSeconds(5));
        assertThat(pauses.paused()).isTrue();
        assertThatThrownBy(pauses::checkCallable)
                .isInstanceOf(SessionPausedException.class)
                .hasMessageContaining("s-2");
        assertThatThrownBy(() -> pauses.beforeCall().block(Duration.ofSeconds(5)))
                .isInstanceOf(SessionPausedException.class);
        pauses.autoResume(true);
        pauses.beforeCall().block(Duration.ofSeconds(5));
        assertThat(pauses.paused()).isFalse();
        timers.stop();
    }
}
