package dev.sandbox.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the README's code honest: every Java block in README.md that follows a marker
 *
 * <pre>{@code
 * <!-- snippet: samples/webflux-demo/src/main/java/dev/sandbox/samples/quickstart/ReactiveQuickStart.java#quickstart -->
 * }</pre>
 *
 * must equal the lines between {@code // tag::quickstart[]} and {@code // end::quickstart[]} in that source file
 * (which the build compiles and the tests run), give or take common indentation.
 */
class ReadmeSnippetsTest {
    private static final Pattern SNIPPET =
            Pattern.compile("<!--\\s*snippet:\\s*(\\S+?)#(\\S+?)\\s*-->\\s*\\n```java\\n(.*?)\\n```", Pattern.DOTALL);
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)\\n```", Pattern.DOTALL);
    private static final String REACTIVE_QUICK_START =
            "samples/webflux-demo/src/main/java/dev/sandbox/samples/quickstart/ReactiveQuickStart.java#quickstart";

    private static Path repoRoot() {
        return Path.of(System.getProperty("repo.root", "../.."))
                .toAbsolutePath()
                .normalize();
    }

    @Test
    void every_readme_snippet_matches_the_compiled_source_it_names() throws IOException {
        Path readme = repoRoot().resolve("README.md");
        Assumptions.assumeTrue(Files.exists(readme), "no README.md at " + readme + " on this branch");
        String text = Files.readString(readme, StandardCharsets.UTF_8);

        List<String> checked = new ArrayList<>();
        Matcher m = SNIPPET.matcher(text);
        while (m.find()) {
            String file = m.group(1);
            String tag = m.group(2);
            Snippet snippet = Snippet.of(m.group(3));
            assertThat(normalize(snippet.body()))
                    .as("README.md's snippet of %s#%s", file, tag)
                    .isEqualTo(normalize(region(repoRoot().resolve(file), tag)));
            List<String> source = Files.readAllLines(repoRoot().resolve(file), StandardCharsets.UTF_8).stream()
                    .map(String::strip)
                    .toList();
            String ownPackage = source.stream()
                    .filter(l -> l.startsWith("package "))
                    .map(l -> "import " + l.substring("package ".length(), l.length() - 1) + ".")
                    .findFirst()
                    .orElseThrow();
            // what the source imports, or a type of its own package (which it uses without an import)
            assertThat(snippet.imports())
                    .as("the imports %s#%s shows are those of its source", file, tag)
                    .allMatch(i -> source.contains(i)
                            || (i.startsWith(ownPackage) && i.indexOf('.', ownPackage.length()) < 0));
            checked.add(file + "#" + tag);
        }
        assertThat(checked).as("snippets marked in README.md").contains(REACTIVE_QUICK_START);
    }

    /**
     * No Java block escapes the check above: each is a marked copy of compiled code, or a whole source file of the
     * consumer project that {@code readme-commands} builds with Maven against the installed artifacts.
     */
    @Test
    void every_java_block_in_the_readme_is_a_marked_snippet() throws IOException {
        String text = Files.readString(repoRoot().resolve("README.md"), StandardCharsets.UTF_8);
        int blocks = 0;
        Matcher m = JAVA_BLOCK.matcher(text);
        while (m.find()) {
            blocks++;
            String before = text.substring(0, m.start()).stripTrailing();
            assertThat(before.substring(before.lastIndexOf('\n') + 1))
                    .as(
                            "the line before README.md's Java block %s",
                            m.group(1).lines().findFirst().orElse(""))
                    .matches("<!--\\s*(snippet:\\s*\\S+#\\S+|readme-commands:\\s*file\\s+\\S+\\.java)\\s*-->");
        }
        assertThat(blocks).isPositive();
    }

    /**
     * A reader copies a block as it is: with the imports it shows and nothing else, it compiles (as the body of a
     * method that may throw), so it names no type it does not import and no variable it does not define.
     */
    @Test
    void every_readme_snippet_compiles_on_its_own(@TempDir Path dir) throws IOException {
        String text = Files.readString(repoRoot().resolve("README.md"), StandardCharsets.UTF_8);
        List<Path> sources = new ArrayList<>();
        Matcher m = SNIPPET.matcher(text);
        while (m.find()) {
            Snippet snippet = Snippet.of(m.group(3));
            assertThat(snippet.imports())
                    .as("README.md's snippet of %s#%s shows its imports", m.group(1), m.group(2))
                    .isNotEmpty();
            String name = "ReadmeSnippet" + sources.size();
            Path source = dir.resolve(name + ".java");
            // a block of statements becomes a method's body; a block declaring a type or a method, a member
            String body = snippet.declaresMembers()
                    ? snippet.body()
                    : "    static void example() throws Exception {\n" + snippet.body() + "\n    }";
            Files.writeString(
                    source,
                    String.join("\n", snippet.imports()) + "\n\n// " + m.group(1) + "#" + m.group(2) + "\nclass " + name
                            + " {\n" + body + "\n}\n");
            sources.add(source);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter diagnostics = new StringWriter();
        Path classes = Files.createDirectories(dir.resolve("classes"));
        List<String> options =
                List.of("-proc:none", "-d", classes.toString(), "-cp", System.getProperty("java.class.path"));
        boolean compiled;
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            compiled = javac.getTask(
                            diagnostics, files, null, options, null, files.getJavaFileObjectsFromPaths(sources))
                    .call();
        }
        assertThat(compiled)
                .as("README.md's snippets compile on their own:%n%s", diagnostics)
                .isTrue();
    }

    /** A README block: its leading {@code import} lines, and the rest. */
    record Snippet(List<String> imports, String body) {
        /**
         * A declaration with a modifier no local declaration may have ({@code public class Grader}, {@code static
         * String example()}): such a block is a class member, not statements.
         */
        private static final Pattern MEMBER =
                Pattern.compile("(?:public|protected|private|static)\\b.*", Pattern.DOTALL);

        /** Whether the block declares a class member (a type or a method) rather than being statements. */
        boolean declaresMembers() {
            String code = body.lines()
                    .map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("//") && !l.startsWith("@"))
                    .findFirst()
                    .orElse("");
            return MEMBER.matcher(code).matches();
        }

        static Snippet of(String block) {
            List<String> lines = block.lines().toList();
            int i = 0;
            List<String> imports = new ArrayList<>();
            while (i < lines.size()
                    && (lines.get(i).startsWith("import ") || lines.get(i).isBlank())) {
                if (!lines.get(i).isBlank()) {
                    imports.add(lines.get(i).strip());
                }
                i++;
            }
            return new Snippet(imports, String.join("\n", lines.subList(i, lines.size())));
        }
    }

    /** The lines between the tag comments, without them. */
    static String region(Path source, String tag) throws IOException {
        List<String> lines = Files.readAllLines(source, StandardCharsets.UTF_8);
        int start = -1;
        int end = -1;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (line.equals("// tag::" + tag + "[]")) {
                start = i;
            } else if (line.equals("// end::" + tag + "[]")) {
                end = i;
            }
        }
        assertThat(start).as("// tag::%s[] in %s", tag, source).isNotNegative();
        assertThat(end).as("// end::%s[] after the tag in %s", tag, source).isGreaterThan(start);
        return String.join("\n", lines.subList(start + 1, end));
    }

    /** Strips the indentation all lines share and trailing blanks, so a snippet may sit flush left. */
    static String normalize(String block) {
        List<String> lines = block.lines().map(String::stripTrailing).toList();
        int indent = lines.stream()
                .filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length())
                .min()
                .orElse(0);
        return String.join(
                        "\n",
                        lines.stream()
                                .map(l -> l.isBlank() ? "" : l.substring(indent))
                                .toList())
                .strip();
    }
}
