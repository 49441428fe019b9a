package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.testsupport.ReactiveStreamsTck;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK against {@link ItemStream}, the agent client's publisher of many answers, through a
 * directory listing on the real agent (a local child in {@code stdio} mode, as {@link RealAgentTest} runs it): a
 * publisher of N elements lists a directory of N files.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ItemStreamTckTest {
    /** The most files a listed directory gets here. */
    private static final int MAX_ELEMENTS = 64;

    private static final String ONE_REQUEST =
            "each listing is one request to the agent: a second subscriber is refused with onError";

    @TempDir
    Path dir;

    private StdioTransport transport;
    private AgentConnection agent;

    @BeforeAll
    void connect() {
        Path binary = StdioTransport.findBinary();
        assertThat(binary)
                .as("the sandbox-agent binary (built by the sandbox-agent module)")
                .isNotNull();
        transport = new StdioTransport(binary);
        agent = AgentConnection.open(
                        transport, AgentConnection.Options.defaults().withSessionId("tck"))
                .block(Duration.ofSeconds(10));
    }

    @AfterAll
    void disconnect() throws InterruptedException {
        if (agent != null) {
            agent.close();
        }
        if (transport != null) {
            transport.kill();
        }
    }

    @TestFactory
    Stream<DynamicTest> a_listing_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(
                new Verification(),
                Map.of(
                        "optional_spec111_maySupportMultiSubscribe", ONE_REQUEST,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
                                ONE_REQUEST,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
                                ONE_REQUEST,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
                                ONE_REQUEST,
                        "optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals", ONE_REQUEST,
                        "required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue",
                                "it needs a publisher of Integer.MAX_VALUE elements: a directory of two billion files"));
    }

    final class Verification extends PublisherVerification<AgentFileInfo> {
        Verification() {
            super(new TestEnvironment(5_000, 200));
        }

        @Override
        public Publisher<AgentFileInfo> createPublisher(long elements) {
            try {
                Path listed = Files.createTempDirectory(dir, "n" + elements + "-");
                for (int i = 0; i < elements; i++) {
                    Files.createFile(listed.resolve("f" + i));
                }
                return agent.files().list(listed.toString(), 1);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** A listing of a directory that is not there: the agent's error reaches the subscriber. */
        @Override
        public Publisher<AgentFileInfo> createFailedPublisher() {
            return agent.files().list(dir.resolve("missing").toString(), 1);
        }

        @Override
        public long maxElementsFromPublisher() {
            return MAX_ELEMENTS;
        }
    }
}
