package dev.sandbox.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every rule of {@link ArchitectureRules} fails on the deliberately bad classes of {@code fixtures} (rooted there
 * instead of at {@code dev.sandbox}), names each of them, and leaves the deliberately fine ones alone.
 */
class ArchitectureRulesCanFailTest {

    private static final String ROOT = "dev.sandbox.architecture.fixtures";
    private static final JavaClasses FIXTURES = new ClassFileImporter().importPackages(ROOT);
    private static final ArchitectureRules RULES = new ArchitectureRules(ROOT);

    private static List<String> violations(ArchRule rule) {
        EvaluationResult result = rule.evaluate(FIXTURES);
        assertThat(result.hasViolation())
                .as("%s reports a violation", rule.getDescription())
                .isTrue();
        return result.getFailureReport().getDetails();
    }

    /** Some violation names both the offending class (or member) and what it must not name. */
    private static void reports(List<String> violations, String offender, String named) {
        assertThat(violations)
                .as("a violation of %s naming %s", offender, named)
                .anyMatch(line -> line.contains(ROOT + "." + offender) && line.contains(named));
    }

    private static void assertThatNoViolationMentions(List<String> violations, String... fine) {
        for (String name : fine) {
            assertThat(violations).as("no violation of %s", name).noneMatch(line -> line.contains(ROOT + "." + name));
        }
    }

    @Test
    void public_signatures_naming_transport_types_fail() {
        List<String> violations = violations(RULES.publicSignaturesNameNoTransportTypes());

        reports(violations, "docker.ReturnsNettyInGenerics.buffers() returns", "io.netty.buffer.ByteBuf");
        reports(violations, "docker.TakesJacksonInMap.read(java.util.Map) parameter", "JsonNode");
        reports(violations, "docker.ExposesDockerJavaArrayField.clients field type", "DockerClient");
        reports(violations, "docker.ProtectedConstructorTakesJna.<init>(com.sun.jna.Pointer)", "com.sun.jna.Pointer");
        reports(violations, "docker.BoundedByNetty: type parameter T", "io.netty.util.ReferenceCounted");
        reports(violations, "docker.MethodBoundedByJackson.configure(java.util.function.Supplier)", "ObjectMapper");
        reports(violations, "docker.ExtendsNetty: extends", "io.netty.util.AbstractReferenceCounted");
        reports(violations, "docker.SuppliesReactorNetty: implements", "reactor.netty.http.client.HttpClient");
        reports(violations, "docker.ThrowsNetty.run() throws", "io.netty.channel.ChannelException");
        reports(violations, "docker.OuterWithExportedNested$Exported.buffer()", "io.netty.buffer.ByteBuf");
        assertThatNoViolationMentions(
                violations,
                "docker.HidesNetty",
                "docker.PackagePrivateExposesNetty",
                "docker.OuterWithExportedNested:",
                "docker.DockerProviderApi",
                "implementation.");
    }

    @Test
    void the_blocking_facade_using_an_implementation_package_fails() {
        List<String> violations = violations(RULES.blockingUsesNoImplementation());

        reports(violations, "blocking.BlockingUsesImplementation", ROOT + ".implementation.exec.LineRun");
        assertThatNoViolationMentions(violations, "blocking.BlockingUsesApi");
    }

    @Test
    void an_integration_using_an_implementation_package_fails() {
        List<String> violations = violations(RULES.integrationsUseOnlyThePublicApi());

        reports(violations, "tools.ToolsUseImplementation", ROOT + ".implementation.exec.LineRun");
        assertThatNoViolationMentions(violations, "tools.ToolsUseApi", "mcp.McpUsesItsOwnImplementation");
    }

    @Test
    void the_server_using_internals_it_does_not_share_fails() {
        List<String> violations = violations(RULES.serverUsesOnlySharedImplementation());

        reports(
                violations,
                "server.implementation.ServerUsesDockerInternals",
                ROOT + ".implementation.docker.InternalExposesNetty");
        reports(violations, "server.implementation.ServerUsesExecRunner", ROOT + ".implementation.exec.ExecRunner");
        reports(violations, "server.implementation.ServerUsesLocalFileIo", ROOT + ".implementation.files.LocalFileIo");
        reports(
                violations,
                "server.implementation.ServerUsesRemoteClient",
                ROOT + ".implementation.remote.RemoteTransport");
        // the wire format, the framing and tree contracts (nested types included), Version and its own internals are
        // allowed
        assertThatNoViolationMentions(violations, "server.ServerUsesShared");
    }

    @Test
    void the_wire_format_using_the_remote_client_or_the_server_fails() {
        List<String> violations = violations(RULES.wireUsesNeitherClientNorServer());

        reports(
                violations,
                "implementation.wire.WireUsesClientAndServer",
                ROOT + ".implementation.remote.RemoteTransport");
        reports(
                violations,
                "implementation.wire.WireUsesClientAndServer",
                ROOT + ".server.implementation.OwnInternals");
        // the wire format's own classes, and the remote client using them, are fine: only the bad fixture is named
        assertThat(violations).allMatch(line -> line.contains(ROOT + ".implementation.wire.WireUsesClientAndServer"));
    }

    @Test
    void providers_using_each_other_fail() {
        List<String> violations = violations(RULES.providersAreIndependent());

        reports(violations, "local.LocalUsesDockerProvider", ROOT + ".docker.DockerProviderApi");
        reports(
                violations,
                "implementation.docker.DockerUsesRemoteTransport",
                ROOT + ".implementation.remote.RemoteTransport");
        // the server is no provider: its use of the wire format is the server rule's business
        assertThatNoViolationMentions(violations, "server.");
    }

    @Test
    void the_core_using_netty_jackson_or_docker_java_fails() {
        List<String> violations = violations(RULES.coreUsesNoNettyJacksonOrDockerJava());

        reports(violations, "CoreUsesNetty", "io.netty.buffer.Unpooled");
        reports(violations, "local.LocalUsesDockerJava", "com.github.dockerjava.api.DockerClient");
        // the docker provider, API and internals, is not core
        assertThatNoViolationMentions(violations, "docker.", "implementation.docker.");
    }

    @Test
    void a_public_api_package_without_null_marked_fails() {
        List<String> violations = violations(RULES.publicApiPackagesAreNullMarked());

        reports(violations, "docker.DockerProviderApi", "does not lie in a @NullMarked package");
        reports(violations, "local.LocalUsesDockerProvider", "does not lie in a @NullMarked package");
        // blocking's package-info carries @NullMarked; implementation packages are not the API
        assertThatNoViolationMentions(violations, "blocking.", "implementation.", "mcp.implementation.");
    }

    @Test
    void the_agent_client_using_a_provider_netty_or_docker_java_fails() {
        List<String> violations = violations(RULES.agentClientUsesNoProvider());

        reports(violations, "implementation.agent.AgentUsesDocker", ROOT + ".docker.DockerProviderApi");
        reports(violations, "implementation.agentsession.SessionUsesNetty", "io.netty.buffer.Unpooled");
        // the agent client using the core is fine: only the bad fixtures are named
        assertThat(violations)
                .allMatch(line -> line.contains(ROOT + ".implementation.agent.AgentUsesDocker")
                        || line.contains(ROOT + ".implementation.agentsession.SessionUsesNetty"));
    }
}
