package dev.sandbox.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The rules of {@link ArchitectureRules} over the production classes of every library module (this module depends on
 * all of them; test classes, this module's fixtures included, are not imported).
 */
@AnalyzeClasses(packages = "dev.sandbox", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    private static final ArchitectureRules RULES = new ArchitectureRules("dev.sandbox");

    @ArchTest
    static final ArchRule public_signatures_name_no_netty_jackson_docker_java_or_jna_type =
            RULES.publicSignaturesNameNoTransportTypes();

    @ArchTest
    static final ArchRule the_blocking_facade_uses_no_implementation_package = RULES.blockingUsesNoImplementation();

    @ArchTest
    static final ArchRule the_server_uses_only_the_implementation_it_shares =
            RULES.serverUsesOnlySharedImplementation();

    @ArchTest
    static final ArchRule the_wire_format_uses_neither_the_remote_client_nor_the_server =
            RULES.wireUsesNeitherClientNorServer();

    @ArchTest
    static final ArchRule the_agent_client_uses_no_provider_netty_or_docker_java = RULES.agentClientUsesNoProvider();

    @ArchTest
    static final ArchRule integrations_use_only_the_public_api = RULES.integrationsUseOnlyThePublicApi();

    @ArchTest
    static final ArchRule providers_do_not_use_each_other = RULES.providersAreIndependent();

    @ArchTest
    static final ArchRule the_core_uses_no_netty_jackson_or_docker_java = RULES.coreUsesNoNettyJacksonOrDockerJava();

    @ArchTest
    static final ArchRule public_api_packages_are_null_marked = RULES.publicApiPackagesAreNullMarked();

    /** The rules pass vacuously if a module's classes are missing from the import: every module must be there. */
    @ArchTest
    static void every_library_module_is_imported(JavaClasses classes) {
        Set<String> packages = classes.stream().map(JavaClass::getPackageName).collect(Collectors.toSet());
        assertThat(packages)
                .contains(
                        "dev.sandbox", // sandbox-reactive: the API
                        "dev.sandbox.local", // sandbox-reactive: the local provider
                        "dev.sandbox.implementation.exec", // sandbox-reactive: the exec machinery
                        "dev.sandbox.tck",
                        "dev.sandbox.docker",
                        "dev.sandbox.implementation.docker",
                        "dev.sandbox.implementation.agent", // sandbox-agent-client: the agent protocol's client
                        "dev.sandbox.implementation.agentsession", // sandbox-agent-client: the agent-backed session
                        "dev.sandbox.remote",
                        "dev.sandbox.implementation.remote",
                        "dev.sandbox.implementation.wire", // sandbox-wire: the wire format
                        "dev.sandbox.server",
                        "dev.sandbox.server.implementation",
                        "dev.sandbox.blocking",
                        "dev.sandbox.tools",
                        "dev.sandbox.micrometer",
                        "dev.sandbox.spring.boot.autoconfigure",
                        "dev.sandbox.spring.ai",
                        "dev.sandbox.langchain4j",
                        "dev.sandbox.mcp",
                        "dev.sandbox.mcp.implementation");
        assertThat(packages).noneMatch(name -> name.startsWith("dev.sandbox.architecture"));
    }
}
