package dev.sandbox.samples.cli;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The converters of the CLI's option and parameter values. Each rejects a bad value with what it expected and what it
 * got; picocli puts the option's name in front.
 */
final class Values {
    private Values() {}

    /** A whole number: digits only, no sign. */
    static final class WholeNumber implements ITypeConverter<Long> {
        @Override
        public Long convert(String text) {
            return wholeNumber(text, text);
        }
    }

    /** A port number, 0 to 65535 (0 for any free port). */
    static final class Port implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String text) {
            long port = wholeNumber(text, text);
            if (port > 65535) {
                throw new TypeConversionException("expected 0 to 65535, got '" + text + "'");
            }
            return (int) port;
        }
    }

    /** A port a server listens on, 1 to 65535. */
    static final class ServerPort implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String text) {
            if (!text.matches("\\d{1,5}") || Integer.parseInt(text) < 1 || Integer.parseInt(text) > 65535) {
                throw new TypeConversionException("expected a port from 1 to 65535, got '" + text + "'");
            }
            return Integer.parseInt(text);
        }
    }

    /**
     * An IP address literal, IPv4 ({@code 127.0.0.1}) or IPv6 ({@code ::1}, brackets allowed), or {@code localhost}.
     * Names are not looked up: where a listener binds should not depend on what a resolver answers.
     */
    static final class IpAddress implements ITypeConverter<InetAddress> {
        private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
        private static final Pattern IPV6 = Pattern.compile("[0-9a-fA-F:.]+");

        @Override
        public InetAddress convert(String text) {
            if (text.equals("localhost")) {
                return InetAddress.getLoopbackAddress();
            }
            String bare = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
            Matcher v4 = IPV4.matcher(bare);
            boolean valid = v4.matches()
                    ? IntStream.rangeClosed(1, 4).allMatch(i -> Integer.parseInt(v4.group(i)) <= 255)
                    : bare.indexOf(':') >= 0 && IPV6.matcher(bare).matches();
            if (valid) {
                try {
                    return InetAddress.getByName(bare); // a literal: parsed, never looked up
                } catch (UnknownHostException e) {
                    // not a well-formed IPv6 literal after all
                }
            }
            throw new TypeConversionException(
                    "expected an IP address such as 127.0.0.1, 0.0.0.0 or ::1 (or localhost), got '" + text + "'");
        }
    }

    /** A byte count with an optional k, m or g suffix (powers of 1024). */
    static final class Size implements ITypeConverter<Long> {
        @Override
        public Long convert(String text) {
            String lower = text.toLowerCase(Locale.ROOT);
            if (!lower.matches("\\d+[kmg]?")) {
                throw new TypeConversionException(
                        "expected a number of bytes with an optional k, m or g suffix, got '" + text + "'");
            }
            int shift = switch (lower.charAt(lower.length() - 1)) {
                case 'k' -> 10;
                case 'm' -> 20;
                case 'g' -> 30;
                default -> 0;
            };
            long n = wholeNumber(shift == 0 ? lower : lower.substring(0, lower.length() - 1), text);
            if (n > (Long.MAX_VALUE >> shift)) {
                throw new TypeConversionException("'" + text + "' is too large");
            }
            return n << shift;
        }
    }

    /** A memory limit: a size of at least Docker's smallest limit, 6 MiB. */
    static final class Memory implements ITypeConverter<Long> {
        @Override
        public Long convert(String text) {
            long bytes = new Size().convert(text);
            long min = dev.sandbox.docker.DockerSettings.MIN_MEMORY_LIMIT;
            if (bytes < min) {
                throw new TypeConversionException("expected at least " + (min >> 20) + "m (" + (min >> 20)
                        + " MiB, the smallest memory limit Docker accepts), got '" + text + "' (" + mib(bytes)
                        + " MiB)");
            }
            return bytes;
        }

        private static String mib(long bytes) {
            return bytes % (1 << 20) == 0
                    ? Long.toString(bytes >> 20)
                    : String.format(Locale.ROOT, "%.2f", bytes / (double) (1 << 20));
        }
    }

    /** A CPU limit: a positive number of CPUs such as 0.5. */
    static final class Cpus implements ITypeConverter<Double> {
        @Override
        public Double convert(String text) {
            try {
                double cpus = Double.parseDouble(text);
                if (cpus > 0 && cpus <= 1024) {
                    return cpus;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new TypeConversionException("expected a positive number such as 0.5, got '" + text + "'");
        }
    }

    /** An id, an image name: anything but blank. */
    static final class NonBlank implements ITypeConverter<String> {
        @Override
        public String convert(String text) {
            if (text.isBlank()) {
                throw new TypeConversionException("must not be empty, got '" + text + "'");
            }
            return text;
        }
    }

    /** A Kubernetes namespace: a DNS label (at most 63 lower-case letters, digits and '-', alphanumeric at both ends). */
    static final class DnsLabel implements ITypeConverter<String> {
        @Override
        public String convert(String text) {
            if (!text.matches("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")) {
                throw new TypeConversionException("expected a DNS label (at most 63 lower-case letters, digits and '-',"
                        + " starting and ending with a letter or digit), got '" + text + "'");
            }
            return text;
        }
    }

    /** A file name, as given. */
    static final class FilePath implements ITypeConverter<Path> {
        @Override
        public Path convert(String text) {
            if (text.isEmpty()) {
                throw new TypeConversionException("needs a file");
            }
            try {
                return Path.of(text);
            } catch (InvalidPathException e) {
                throw new TypeConversionException("'" + text + "' is not a path: " + e.getReason());
            }
        }
    }

    /** A directory, made absolute: a session's workdir must be. */
    static final class AbsoluteDirectory implements ITypeConverter<String> {
        @Override
        public String convert(String text) {
            if (text.isEmpty()) {
                throw new TypeConversionException("needs a directory");
            }
            return new FilePath().convert(text).toAbsolutePath().normalize().toString();
        }
    }

    /** A server's base URL: http or https, with a host. */
    static final class HttpUrl implements ITypeConverter<String> {
        @Override
        public String convert(String text) {
            try {
                URI uri = new URI(text);
                if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null) {
                    return text;
                }
                throw new TypeConversionException("expected http://HOST:PORT, got '" + text + "'");
            } catch (URISyntaxException e) {
                throw new TypeConversionException("'" + text + "' is not a URL: " + e.getReason());
            }
        }
    }

    /**
     * {@code NAME=VALUE}, split at the first {@code =}; the name must not be empty, the value may.
     *
     * @param name the part before the first {@code =}
     * @param value the rest
     */
    record KeyValue(String name, String value) {
        /** Reads {@code NAME=VALUE}. */
        static final class Converter implements ITypeConverter<KeyValue> {
            @Override
            public KeyValue convert(String text) {
                int sep = text.indexOf('=');
                if (sep <= 0) {
                    throw new TypeConversionException("expected a name, '=' and a value, got '" + text + "'");
                }
                return new KeyValue(text.substring(0, sep), text.substring(sep + 1));
            }
        }
    }

    /**
     * One of a fixed set of words; they are also the option's completion candidates.
     *
     * <pre>{@code
     * @Option(names = "--runtime", converter = Runtimes.class, completionCandidates = Runtimes.class)
     * }</pre>
     */
    abstract static class OneOf implements ITypeConverter<String>, Iterable<String> {
        private final List<String> words;

        OneOf(String... words) {
            this.words = List.of(words);
        }

        @Override
        public String convert(String text) {
            if (!words.contains(text)) {
                String hint = Suggestions.didYouMean(Suggestions.closeTo(text, words));
                // the hint goes on a line of its own, as picocli's suggestions do (SandboxCommand.usageError)
                throw new TypeConversionException("expected one of " + String.join(", ", words) + ", got '" + text + "'"
                        + (hint == null ? "" : "\n" + hint));
            }
            return text;
        }

        @Override
        public Iterator<String> iterator() {
            return words.iterator();
        }
    }

    /** The providers the CLI knows. */
    static final class Providers extends OneOf {
        Providers() {
            super("local", "docker", "kubernetes", "remote");
        }
    }

    /** Docker's pull policies. */
    static final class PullPolicies extends OneOf {
        PullPolicies() {
            super("always", "if-not-present", "never");
        }
    }

    /** The container runtimes: runc, or runsc for gVisor. */
    static final class Runtimes extends OneOf {
        Runtimes() {
            super("runc", "runsc");
        }
    }

    /** The networks a session's container may have. */
    static final class Networks extends OneOf {
        Networks() {
            super("none", "bridge");
        }
    }

    /** Digits only, as a long; {@code given} is what the user wrote, for the message. */
    static long wholeNumber(String digits, String given) {
        if (!digits.matches("\\d+")) {
            throw new TypeConversionException("expected a whole number, got '" + given + "'");
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + given + "' is too large");
        }
    }
}
