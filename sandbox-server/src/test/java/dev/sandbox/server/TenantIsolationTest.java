package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server's token reaches only the sessions created with it: sessions other clients of the same provider made, and
 * sessions of another token, are not listed and answer every per-session route exactly as a missing session does.
 */
class TenantIsolationTest {
    private static final String ALICE = "alice-token-0123456789abcdef";
    private static final String BOB = "bob-token-0123456789abcdefgh";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private LocalSandboxProvider local;
    private SandboxServer server;
    private RemoteSandboxProvider alice;
    private RemoteSandboxProvider bob;
    private HttpClient http;

    @BeforeEach
    void start() {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .port(0)
                .token("alice", ALICE.toCharArray())
                .token("bob", BOB.toCharArray())
                .start();
        alice = remote(server, ALICE);
        bob = remote(server, BOB);
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
    }

    private static RemoteSandboxProvider remote(SandboxServer server, String token) {
        return RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(token.toCharArray())
                .build();
    }

    @AfterEach
    void stop() {
        http.close();
        alice.close();
        bob.close();
        server.close();
        local.close();
    }

    @Test
    void twoTenantsSameNameAreTwoSessionsNeitherFindsTheOthers() {
        SandboxSession a =
                alice.createOrAttach("workspace", SessionOptions.defaults()).block(WAIT);
        SandboxSession b =
                bob.createOrAttach("workspace", SessionOptions.defaults()).block(WAIT);
        assertThat(a.id()).isNotEqualTo(b.id());
        assertThat(a.name()).contains("workspace");
        assertThat(b.name()).contains("workspace");
        assertThat(alice.attachByName("workspace").block(WAIT).id()).isEqualTo(a.id());
        assertThat(bob.attachByName("workspace").block(WAIT).id()).isEqualTo(b.id());
        // each tenant's list shows its own, under the name it gave
        assertThat(alice.list(Map.of()).collectList().block(WAIT))
                .extracting(SessionInfo::id, SessionInfo::name)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(a.id(), java.util.Optional.of("workspace")));
        // the provider holds two other names, neither of them the tenants' own
        List<SessionInfo> inner = local.list(Map.of()).collectList().block(WAIT);
        assertThat(inner)
                .extracting(i -> i.name().orElseThrow())
                .doesNotContain("workspace")
                .hasSize(2);
        // a name only alice has is not found by bob, and an error names the tenant's name, never the provider's
        alice.create(SessionOptions.defaults().withName("alice-only")).block(WAIT);
        assertThatThrownBy(() -> bob.attachByName("alice-only").block(WAIT))
                .isInstanceOf(SessionNotFoundException.class)
                .hasMessageContaining("alice-only");
        assertThatThrownBy(() -> alice.create(SessionOptions.defaults().withName("workspace"))
                        .block(WAIT))
                .isInstanceOfSatisfying(
                        dev.sandbox.SessionNameInUseException.class,
                        e -> assertThat(e.name()).isEqualTo("workspace"));
        // the inner names are not the tenants' to use: bob cannot reach alice's session by its provider name
        String alicesInner = local.attach(a.id()).block(WAIT).name().orElseThrow();
        assertThatThrownBy(() -> bob.attachByName(alicesInner).block(WAIT))
                .isInstanceOf(SessionNotFoundException.class);
        // destroying bob's leaves alice's
        b.destroy().block(WAIT);
        assertThat(alice.attachByName("workspace").block(WAIT).id()).isEqualTo(a.id());
        assertThatThrownBy(() -> bob.attachByName("workspace").block(WAIT))
                .isInstanceOf(SessionNotFoundException.class);
    }

    @Test
    void aSessionAnotherClientOfTheProviderMadeIsInvisible() {
        SandboxSession direct =
                local.create(SessionOptions.defaults().withLabel("team", "x")).block(WAIT);

        assertThat(ids(alice.list(Map.of()).collectList().block(WAIT))).doesNotContain(direct.id());
        assertThat(ids(alice.list(Map.of("team", "x")).collectList().block(WAIT)))
                .isEmpty();
        assertThatThrownBy(() -> alice.attach(direct.id()).block(WAIT)).isInstanceOf(SessionNotFoundException.class);
        assertLikeAMissingSession(ALICE, direct.id());

        assertThat(direct.run(ExecOptions.of("echo", "alive")).block(WAIT).stdout())
                .as("nothing through the server touched it")
                .isEqualTo("alive\n");
        direct.destroy().block(WAIT);
    }

    @Test
    void twoTokensCannotSeeEachOthersSessions() {
        SandboxSession mine =
                alice.create(SessionOptions.defaults().withLabel("team", "a")).block(WAIT);
        SandboxSession theirs =
                bob.create(SessionOptions.defaults().withLabel("team", "a")).block(WAIT);

        List<SessionInfo> aliceSees = alice.list(Map.of()).collectList().block(WAIT);
        assertThat(ids(aliceSees)).containsExactly(mine.id());
        assertThat(aliceSees.get(0).labels())
                .as("the server's own label is not shown")
                .isEqualTo(Map.of("team", "a"));
        assertThat(ids(bob.list(Map.of("team", "a")).collectList().block(WAIT))).containsExactly(theirs.id());
        assertThatThrownBy(() -> bob.attach(mine.id()).block(WAIT)).isInstanceOf(SessionNotFoundException.class);
        assertLikeAMissingSession(BOB, mine.id());
        assertLikeAMissingSession(ALICE, theirs.id());

        assertThat(mine.run(ExecOptions.of("echo", "mine")).block(WAIT).stdout())
                .isEqualTo("mine\n");
        assertThat(alice.attach(mine.id()).block(WAIT).id()).isEqualTo(mine.id());
    }

    @Test
    void aClientMayNotSetTheServersLabel() {
        SessionOptions forged = SessionOptions.defaults().withLabel("sandbox-server.tenant", "someone");
        assertThatThrownBy(() -> alice.create(forged).block(WAIT))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("labels"));
    }

    @Test
    void aSessionKeepsItsTenantAcrossAServerRestart() {
        SandboxServer second = SandboxServer.builder(local)
                .port(0)
                .token("alice", ALICE.toCharArray())
                .token("bob", BOB.toCharArray())
                .start();
        try (RemoteSandboxProvider aliceAgain = remote(second, ALICE);
                RemoteSandboxProvider bobAgain = remote(second, BOB)) {
            SandboxSession mine = alice.create(SessionOptions.defaults()).block(WAIT);
            assertThat(ids(aliceAgain.list(Map.of()).collectList().block(WAIT))).containsExactly(mine.id());
            assertThat(aliceAgain
                            .attach(mine.id())
                            .flatMap(s -> s.run(ExecOptions.of("echo", "again")))
                            .block(WAIT)
                            .stdout())
                    .isEqualTo("again\n");
            assertThat(ids(bobAgain.list(Map.of()).collectList().block(WAIT))).isEmpty();
            assertThatThrownBy(() -> bobAgain.attach(mine.id()).block(WAIT))
                    .isInstanceOf(SessionNotFoundException.class);
        } finally {
            second.stop(Duration.ofSeconds(5));
        }
    }

    private static List<String> ids(List<SessionInfo> infos) {
        return infos.stream().map(SessionInfo::id).toList();
    }

    /** Every per-session route answers for the session exactly as for an id that never existed. */
    private void assertLikeAMissingSession(String token, String id) {
        String missing = "no-such-session-" + id.length();
        String[][] routes = {
            {"GET", ""},
            {"GET", "/status"},
            {"PUT", "/lifetime", "{\"ms\":60000}"},
            {"PUT", "/idle-timeout", "{\"ms\":60000}"},
            {"POST", "/pause"},
            {"POST", "/resume"},
            {"POST", "/run", "{\"argv\":[\"echo\",\"x\"]}"},
            {"POST", "/exec", "{\"argv\":[\"echo\",\"x\"]}"},
            {"GET", "/execs/abc/events"},
            {"POST", "/execs/abc/ack", "{\"stdout\":1}"},
            {"DELETE", "/execs/abc"},
            {"PUT", "/stdin/abc", "data"},
            {"POST", "/processes", "{\"argv\":[\"sleep\",\"1\"]}"},
            {"GET", "/processes"},
            {"GET", "/files/content?path=a"},
            {"PUT", "/files/content?path=a", "data"},
            {"GET", "/files/list?path=."},
            {"POST", "/files/mkdir", "{\"path\":\"d\"}"},
            {"POST", "/ptys", "{\"argv\":[\"sh\"],\"cols\":80,\"rows\":24}"},
            {"DELETE", ""},
        };
        for (String[] r : routes) {
            String body = r.length > 2 ? r[2] : null;
            Answer other = send(token, r[0], "/v1/sessions/" + id + r[1], body);
            Answer none = send(token, r[0], "/v1/sessions/" + missing + r[1], body);
            assertThat(other.status).as(r[0] + " " + r[1]).isEqualTo(404).isEqualTo(none.status);
            assertThat(other.body.replace(id, "ID")).as(r[0] + " " + r[1]).isEqualTo(none.body.replace(missing, "ID"));
        }
    }

    private record Answer(int status, String body) {}

    private Answer send(String token, String method, String path, String body) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .timeout(WAIT)
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            JsonNode n = JSON.readTree(r.body());
            assertThat(n.path("error").path("type").asText()).isEqualTo("SessionNotFoundException");
            return new Answer(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new AssertionError(method + " " + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
