package dev.sandbox.samples.cli;

import static dev.sandbox.samples.cli.CommandLineTest.cli;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code --pool N} of {@code serve} and {@code mcp}: a value that cannot be used is a usage error naming it. */
class PoolOptionTest {
    private static void assertRefused(String message, String... args) {
        CommandLineTest.Outcome o = cli(args);
        String shown = String.join(" ", args);
        assertThat(o.code()).as(shown).isEqualTo(2);
        assertThat(o.out()).as(shown).isEmpty();
        assertThat(o.firstErrorLine()).as(shown).isEqualTo("sandbox: " + message);
    }

    @Test
    void aPoolThatIsNotAWholeNumberOrTooLargeIsRefusedByName() {
        for (String command : new String[] {"serve", "mcp"}) {
            String[] tail = command.equals("serve") ? new String[] {"--token-file", "t"} : new String[] {};
            assertRefused(
                    "Invalid value for option '--pool': expected a whole number, got 'abc'",
                    concat(new String[] {command, "--pool", "abc"}, tail));
            assertRefused(
                    "Invalid value for option '--pool': expected a whole number, got '-1'",
                    concat(new String[] {command, "--pool=-1"}, tail));
            assertRefused(
                    "Invalid value for option '--pool': expected a whole number, got '-1'",
                    concat(new String[] {command, "--pool", "-1"}, tail));
            assertRefused(
                    "--pool must be from 0 to 256, got 1000", concat(new String[] {command, "--pool", "1000"}, tail));
        }
    }

    @Test
    void poolIsParsedAndZeroByDefault() {
        assertThat(CommandLineTest.parse(ServeCommand.class, "serve", "--pool", "3", "--token-file", "t").pool)
                .isEqualTo(3);
        assertThat(CommandLineTest.parse(ServeCommand.class, "serve", "--token-file", "t").pool)
                .isZero();
        assertThat(CommandLineTest.parse(McpCommand.class, "mcp", "--provider", "local", "--pool", "2").pool)
                .isEqualTo(2);
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
