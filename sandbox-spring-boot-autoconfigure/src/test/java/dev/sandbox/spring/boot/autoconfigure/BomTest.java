package dev.sandbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * {@code sandbox-bom} lists every artifact the build publishes, at the build's version, and nothing else of its own:
 * a module added to the root pom without a line in the BOM fails here. It lives with the starter, the BOM's first
 * user, because a BOM module has no tests of its own.
 */
class BomTest {
    /**
     * Modules of the root pom that are not published: tests, samples, benchmarks, the BOM itself, and the agent image
     * (an image archive users load and push to their registry, no jar to depend on).
     */
    private static final Set<String> UNPUBLISHED = Set.of(
            "sandbox-test-support",
            "sandbox-agent-image",
            "sandbox-architecture",
            "readme-commands",
            "samples",
            "samples/webflux-demo",
            "benchmarks",
            "sandbox-bom");

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private static Document read(Path pom) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return factory.newDocumentBuilder().parse(pom.toFile());
    }

    /** The text of the direct child {@code name} of {@code parent}, or null. */
    private static String child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e.getTextContent().trim();
            }
        }
        return null;
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }

    private static Element only(Element parent, String name) {
        List<Element> found = children(parent, name);
        assertThat(found).as("<%s> in <%s>", name, parent.getTagName()).hasSize(1);
        return found.get(0);
    }

    @Test
    void the_bom_lists_every_published_module_at_the_builds_version() throws Exception {
        Element root = read(ROOT.resolve("pom.xml")).getDocumentElement();
        assertThat(child(root, "artifactId")).isEqualTo("sandbox-parent");
        Set<String> published = new TreeSet<>();
        for (Element module : children(only(root, "modules"), "module")) {
            String dir = module.getTextContent().trim();
            if (UNPUBLISHED.contains(dir)) {
                continue;
            }
            Path pom = ROOT.resolve(dir).resolve("pom.xml");
            assertThat(pom).as("pom of module %s", dir).exists();
            published.add(child(read(pom).getDocumentElement(), "artifactId"));
        }
        assertThat(published).as("published modules").contains("sandbox-reactive", "sandbox-spring-boot-starter");

        Element bom = read(ROOT.resolve("sandbox-bom/pom.xml")).getDocumentElement();
        assertThat(child(bom, "parent"))
                .as("the BOM must not inherit sandbox-parent's third-party versions")
                .isNull();
        assertThat(child(bom, "groupId")).isEqualTo("dev.sandbox");
        assertThat(child(bom, "packaging")).isEqualTo("pom");
        assertThat(child(bom, "version")).isEqualTo(child(root, "version"));

        Set<String> listed = new TreeSet<>();
        for (Element dependency : children(only(only(bom, "dependencyManagement"), "dependencies"), "dependency")) {
            assertThat(child(dependency, "groupId")).isEqualTo("dev.sandbox");
            assertThat(child(dependency, "version")).isEqualTo("${project.version}");
            assertThat(child(dependency, "scope")).isNull();
            listed.add(child(dependency, "artifactId"));
        }
        assertThat(listed).as("artifacts listed by sandbox-bom").containsAll(published);
    }
}
