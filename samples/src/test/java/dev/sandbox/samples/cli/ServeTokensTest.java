package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code serve --token-file}: one token per line, each a tenant of the server. */
class ServeTokensTest {
    private static List<String> tokens(String file) {
        return ServeCommand.tokens(file.toCharArray()).stream().map(String::new).toList();
    }

    @Test
    void aFileWithOneTokenAndATrailingNewlineHoldsOneToken() {
        assertThat(tokens("token-0123456789abcdef\n")).containsExactly("token-0123456789abcdef");
    }

    @Test
    void eachNonBlankLineIsAToken() {
        assertThat(tokens("first-0123456789abcdef\r\n\n   second-0123456789abcdef  \nthird-0123456789abcdef"))
                .containsExactly("first-0123456789abcdef", "second-0123456789abcdef", "third-0123456789abcdef");
    }
}
