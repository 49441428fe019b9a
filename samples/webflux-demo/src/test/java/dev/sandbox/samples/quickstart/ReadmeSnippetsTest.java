package dev.sandbox.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

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
            assertThat(normalize(m.group(3)))
                    .as("README.md's snippet of %s#%s", file, tag)
                    .isEqualTo(normalize(region(repoRoot().resolve(file), tag)));
            checked.add(file + "#" + tag);
        }
        assertThat(checked).as("snippets marked in README.md").contains(REACTIVE_QUICK_START);
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
