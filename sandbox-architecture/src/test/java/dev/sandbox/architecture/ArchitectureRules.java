package dev.sandbox.architecture;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.domain.JavaTypeVariable;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.NullMarked;

/**
 * The SDK's architecture rules, written over package patterns below a root package: {@code dev.sandbox} for the
 * library modules, {@code dev.sandbox.architecture.fixtures} for the deliberately bad classes that prove each rule
 * can fail. Implementation packages ({@code ..implementation..}) are the modules' internals; every other package is
 * public API.
 */
final class ArchitectureRules {

    /** Third-party types that public signatures never name: users must not need these libraries to call the SDK. */
    static final String[] TRANSPORT_PACKAGES = {
        "io.netty..",
        "reactor.netty..",
        "com.fasterxml.jackson..",
        "tools.jackson..",
        "com.github.dockerjava..",
        "io.fabric8..",
        "com.sun.jna.."
    };

    /** Libraries the core ({@code sandbox-reactive}) does not use: its users get Reactor, slf4j and JNA only. */
    static final String[] NOT_IN_CORE = {
        "io.netty..", "reactor.netty..", "com.fasterxml..", "tools.jackson..", "com.github.dockerjava..", "io.fabric8.."
    };

    /**
     * The types of the exec machinery's framing contract that the server drives (the session's batched exec and the
     * runs of lines it frames): named one by one, because the rest of {@code implementation.exec} (the runner, the
     * ring buffers) is the providers' and not the server's.
     */
    static final List<String> EXEC_CONTRACT_SHARED_WITH_SERVER = List.of("BatchedExec", "LineRun", "Framed");

    /**
     * The directory transfer contract: the tar format of {@code files/tree} and the walk and write of a tree through
     * the public {@code SandboxFiles}, which the server runs over any provider's files.
     */
    static final List<String> TREE_CONTRACT_SHARED_WITH_SERVER = List.of("SandboxTree", "TarCodec", "TreeItem");

    private final String root;

    ArchitectureRules(String root) {
        this.root = root;
    }

    private String pkg(String relative) {
        return relative.isEmpty() ? root : root + "." + relative;
    }

    /**
     * No public or protected member of an exported class in an API package names a Netty, reactor-netty, Jackson,
     * docker-java, fabric8 or JNA type: not in a return or parameter type, a field, a constructor, a thrown exception, a type
     * parameter's bound, a superclass or interface, and not inside a generic argument, wildcard bound or array.
     */
    ArchRule publicSignaturesNameNoTransportTypes() {
        return classes()
                .that()
                .resideInAPackage(root + "..")
                .and()
                .resideOutsideOfPackage("..implementation..")
                .and(EXPORTED)
                .should(nameNoTypeInPublicSignatures(resideInAnyPackage(TRANSPORT_PACKAGES)))
                .because(
                        "users of the SDK must not need Netty, Jackson, docker-java, fabric8 or JNA on their compile path;"
                                + " these stay inside the implementation packages");
    }

    /**
     * Every class of an API package (not {@code ..implementation..}, not the conformance kit) lies in a package
     * annotated {@code @NullMarked}: NullAway checks only marked code, so an API package that lacks the annotation
     * would escape the nullness check unseen. The conformance kit ({@code tck}) is JUnit test code in a main source
     * set, left unmarked: its tests dereference {@code block()}'s results as tests do.
     */
    ArchRule publicApiPackagesAreNullMarked() {
        return classes()
                .that()
                .resideInAPackage(root + "..")
                .and()
                .resideOutsideOfPackages("..implementation..", pkg("tck.."))
                .should(IN_A_NULL_MARKED_PACKAGE)
                .because("NullAway checks the @NullMarked packages only, and the public API's nullness is part of its"
                        + " contract");
    }

    private static final ArchCondition<JavaClass> IN_A_NULL_MARKED_PACKAGE =
            new ArchCondition<>("lie in a package annotated @NullMarked (package-info.java)") {
                @Override
                public void check(JavaClass type, ConditionEvents events) {
                    boolean marked = type.getPackage().isAnnotatedWith(NullMarked.class);
                    String message = type.getName() + (marked ? " lies" : " does not lie") + " in a @NullMarked"
                            + " package (" + type.getPackageName() + ")";
                    events.add(
                            marked
                                    ? SimpleConditionEvent.satisfied(type, message)
                                    : SimpleConditionEvent.violated(type, message));
                }
            };

    /** The blocking facade adapts the public reactive API only. */
    ArchRule blockingUsesNoImplementation() {
        return noClasses()
                .that()
                .resideInAPackage(pkg("blocking.."))
                .should()
                .dependOnClassesThat()
                .resideInAPackage("..implementation..")
                .because("the blocking facade is built only by adapting the reactive API");
    }

    /** The packages of the integrations: the AI tools core, Micrometer, Spring, LangChain4j and MCP. */
    static final List<String> INTEGRATIONS = List.of("tools", "micrometer", "spring", "langchain4j", "mcp");

    /**
     * Each integration (the AI tools core, Micrometer observations, the Spring Boot starter and Spring AI tools,
     * LangChain4j, the MCP server) is built on the SDK's public API: it uses no implementation package but its own.
     */
    ArchRule integrationsUseOnlyThePublicApi() {
        String[] integrations =
                INTEGRATIONS.stream().map(name -> pkg(name + "..")).toArray(String[]::new);
        return noClasses()
                .that()
                .resideInAnyPackage(integrations)
                .should()
                .dependOnClassesThat(resideInAPackage("..implementation..")
                        .and(not(resideInAnyPackage(integrations)))
                        .as("reside in an implementation package of the SDK's modules"))
                .because("an integration depends only on the public API, so the SDK's internals stay free to change");
    }

    /**
     * The server uses its own implementation packages and, of other modules' internals, only what it is designed to
     * share: the wire format ({@code implementation.wire..}, which the remote client uses too; the remote client's
     * own internals in {@code implementation.remote..} are not shared), the exec framing
     * contract ({@link #EXEC_CONTRACT_SHARED_WITH_SERVER} in {@code implementation.exec}) and the SDK's version (the
     * {@code implementation} package itself).
     */
    ArchRule serverUsesOnlySharedImplementation() {
        return noClasses()
                .that()
                .resideInAPackage(pkg("server.."))
                .should()
                .dependOnClassesThat(resideInAPackage(pkg("implementation.."))
                        .and(not(sharedWithServer()))
                        .as("reside in another module's implementation package, other than the wire format ("
                                + pkg("implementation.wire..") + "), the exec framing contract ("
                                + String.join(", ", EXEC_CONTRACT_SHARED_WITH_SERVER) + " in "
                                + pkg("implementation.exec") + "), the directory transfer contract ("
                                + String.join(", ", TREE_CONTRACT_SHARED_WITH_SERVER) + " in "
                                + pkg("implementation.files") + ") and " + pkg("implementation")))
                .because("the server exposes any provider's sessions through the public API");
    }

    private DescribedPredicate<JavaClass> sharedWithServer() {
        DescribedPredicate<JavaClass> execContract = DescribedPredicate.describe(
                "the exec framing contract",
                type -> type.getPackageName().equals(pkg("implementation.exec"))
                        && EXEC_CONTRACT_SHARED_WITH_SERVER.contains(
                                outermost(type).getSimpleName()));
        DescribedPredicate<JavaClass> treeContract = DescribedPredicate.describe(
                "the directory transfer contract",
                type -> type.getPackageName().equals(pkg("implementation.files"))
                        && TREE_CONTRACT_SHARED_WITH_SERVER.contains(
                                outermost(type).getSimpleName()));
        return resideInAPackage(pkg("implementation"))
                .or(resideInAPackage(pkg("implementation.wire..")))
                .or(execContract)
                .or(treeContract);
    }

    /**
     * The wire format ({@code implementation.wire..}, the {@code sandbox-wire} module) is what the server and the
     * remote client share: it depends on neither, so either can change its internals without touching the other.
     */
    ArchRule wireUsesNeitherClientNorServer() {
        return noClasses()
                .that()
                .resideInAPackage(pkg("implementation.wire.."))
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(pkg("remote.."), pkg("implementation.remote.."), pkg("server.."))
                .because("the wire format is shared by the server and the remote client and depends on neither");
    }

    /** The packages of {@code sandbox-agent-client}: the agent protocol's client and the agent-backed session. */
    static final List<String> AGENT_CLIENT = List.of("implementation.agent", "implementation.agentsession");

    /**
     * The agent protocol's client and the agent-backed session ({@link #AGENT_CLIENT}, the {@code
     * sandbox-agent-client} module) are shared by the providers that run the agent (Docker, Kubernetes): they use no
     * provider's packages, and neither Netty, reactor-netty nor docker-java, so a provider reaches its sandbox's agent
     * through its own pipe without pulling in another provider's libraries.
     */
    ArchRule agentClientUsesNoProvider() {
        String[] agentClient =
                AGENT_CLIENT.stream().map(name -> pkg(name + "..")).toArray(String[]::new);
        return noClasses()
                .that()
                .resideInAnyPackage(agentClient)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        pkg("docker.."),
                        pkg("implementation.docker.."),
                        pkg("kubernetes.."),
                        pkg("implementation.kubernetes.."),
                        pkg("remote.."),
                        pkg("implementation.remote.."),
                        "io.netty..",
                        "reactor.netty..",
                        "com.github.dockerjava..",
                        "io.fabric8..")
                .because("the agent client is shared by the providers that run the agent and depends on none of them");
    }

    private static JavaClass outermost(JavaClass type) {
        JavaClass outer = type;
        while (outer.getEnclosingClass().isPresent()) {
            outer = outer.getEnclosingClass().get();
        }
        return outer;
    }

    /**
     * The providers (local, docker, kubernetes, remote), API package and implementation packages together, do not use each
     * other.
     */
    ArchRule providersAreIndependent() {
        List<String> providers = List.of("local", "docker", "kubernetes", "remote");
        SliceAssignment assignment = new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass type) {
                for (String provider : providers) {
                    if (isInPackageTree(type, pkg(provider))
                            || isInPackageTree(type, pkg("implementation." + provider))) {
                        return SliceIdentifier.of(provider + " provider");
                    }
                }
                return SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "providers " + providers + " (" + pkg("<provider>..") + " with "
                        + pkg("implementation.<provider>..") + ")";
            }
        };
        return SlicesRuleDefinition.slices()
                .assignedFrom(assignment)
                .should()
                .notDependOnEachOther()
                .because("each provider is its own artifact; what they share lives in the core");
    }

    private static boolean isInPackageTree(JavaClass type, String pkg) {
        String name = type.getPackageName();
        return name.equals(pkg) || name.startsWith(pkg + ".");
    }

    /**
     * The core ({@code sandbox-reactive}: every package below the root that is not another module's) uses no Netty,
     * reactor-netty, Jackson or docker-java. A new module's packages count as core until they are listed here, so a
     * module that brings such a library fails this rule rather than passing unseen.
     */
    ArchRule coreUsesNoNettyJacksonOrDockerJava() {
        return noClasses()
                .that()
                .resideInAPackage(root + "..")
                .and()
                .resideOutsideOfPackages(
                        pkg("docker.."),
                        pkg("implementation.docker.."),
                        pkg("kubernetes.."),
                        pkg("implementation.kubernetes.."),
                        pkg("remote.."),
                        pkg("implementation.remote.."),
                        pkg("implementation.wire.."),
                        pkg("server.."),
                        pkg("blocking.."),
                        pkg("tck.."),
                        // the integrations bring their frameworks (Spring, Micrometer, LangChain4j, the MCP SDK)
                        pkg("micrometer.."),
                        pkg("spring.."),
                        pkg("langchain4j.."),
                        pkg("mcp.."))
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(NOT_IN_CORE)
                .because("a user of the local provider gets Reactor, slf4j and JNA only");
    }

    /** Public, and nested only in classes that are themselves exported (public or protected). */
    static final DescribedPredicate<JavaClass> EXPORTED = DescribedPredicate.describe(
            "are exported (public, nested only in exported classes)", ArchitectureRules::isExported);

    private static boolean isExported(JavaClass type) {
        if (type.isAnonymousClass() || type.isLocalClass()) {
            return false;
        }
        Set<JavaModifier> modifiers = type.getModifiers();
        boolean visible = modifiers.contains(JavaModifier.PUBLIC)
                || (type.isNestedClass() && modifiers.contains(JavaModifier.PROTECTED));
        return visible
                && type.getEnclosingClass().map(ArchitectureRules::isExported).orElse(true);
    }

    static ArchCondition<JavaClass> nameNoTypeInPublicSignatures(DescribedPredicate<? super JavaClass> forbidden) {
        return new ArchCondition<>(
                "name no type that " + forbidden.getDescription() + " in a public or protected signature") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                Set<String> found = new TreeSet<>();
                type.getSuperclass().ifPresent(superclass -> inspect(superclass, forbidden, "extends", found));
                for (JavaType implemented : type.getInterfaces()) {
                    inspect(implemented, forbidden, "implements", found);
                }
                for (JavaTypeVariable<?> variable : type.getTypeParameters()) {
                    inspectBounds(variable, forbidden, "type parameter", found);
                }
                for (JavaMember member : type.getMembers()) {
                    Set<JavaModifier> modifiers = member.getModifiers();
                    if (!(modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED))
                            || modifiers.contains(JavaModifier.SYNTHETIC)
                            || modifiers.contains(JavaModifier.BRIDGE)) {
                        continue;
                    }
                    String where = member.getFullName();
                    if (member instanceof JavaField field) {
                        inspect(field.getType(), forbidden, where + " field type", found);
                    } else if (member instanceof JavaCodeUnit codeUnit) {
                        if (codeUnit instanceof JavaMethod method) {
                            inspect(method.getReturnType(), forbidden, where + " returns", found);
                        }
                        for (JavaType parameter : codeUnit.getParameterTypes()) {
                            inspect(parameter, forbidden, where + " parameter", found);
                        }
                        for (JavaTypeVariable<?> variable : codeUnit.getTypeParameters()) {
                            inspectBounds(variable, forbidden, where + " type parameter", found);
                        }
                        for (JavaClass thrown : codeUnit.getThrowsClause().getTypes()) {
                            inspect(thrown, forbidden, where + " throws", found);
                        }
                    }
                }
                for (String violation : found) {
                    events.add(SimpleConditionEvent.violated(type, type.getName() + ": " + violation));
                }
                if (found.isEmpty()) {
                    events.add(SimpleConditionEvent.satisfied(type, type.getName() + " names no such type"));
                }
            }
        };
    }

    private static void inspect(
            JavaType signature, DescribedPredicate<? super JavaClass> forbidden, String where, Set<String> found) {
        // generic arguments, wildcard and type variable bounds, array components: every raw type the signature names
        for (JavaClass named : signature.getAllInvolvedRawTypes()) {
            if (forbidden.test(named)) {
                found.add(where + " " + signature.getName()
                        + (signature.getName().equals(named.getName()) ? "" : ", naming " + named.getName()));
            }
        }
    }

    private static void inspectBounds(
            JavaTypeVariable<?> variable,
            DescribedPredicate<? super JavaClass> forbidden,
            String where,
            Set<String> found) {
        for (JavaType bound : variable.getUpperBounds()) {
            inspect(bound, forbidden, where + " " + variable.getName() + " extends", found);
        }
    }
}
