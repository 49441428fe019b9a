package dev.sandbox.server.implementation;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Takes what names the host out of error messages before they leave the server: the server's {@code PATH}, and
 * absolute paths of session workdirs (under the temporary directory, where the local provider makes them, or under a
 * server's workdir root), which become paths relative to the session.
 */
public final class HostPaths {
    private static final String PATH = System.getenv("PATH");
    /** A search path quoted in a launch error, such as {@code (PATH=/usr/bin:/bin)}. */
    private static final Pattern SEARCH_PATH = Pattern.compile("\\s*\\(PATH=[^)]*\\)");

    private static final String END = "(?=[\\s'\",:;)]|$)";
    private static final String SESSION_DIR = "/sandbox-[^/\\s'\",:;)]*";

    private record Rule(Pattern pattern, String replacement) {}

    private static final Set<String> ROOTS = ConcurrentHashMap.newKeySet();
    private static volatile List<Rule> rules = List.of();

    static {
        String tmp = System.getProperty("java.io.tmpdir");
        if (tmp != null && !tmp.isEmpty()) {
            List<Rule> r = new ArrayList<>();
            for (Path p : forms(Path.of(tmp))) {
                String t = Pattern.quote(p.toString());
                // a session dir the local provider made there: paths under it become relative to the session
                r.add(new Rule(Pattern.compile(t + SESSION_DIR + "/"), ""));
                r.add(new Rule(Pattern.compile(t + SESSION_DIR + END), "."));
                r.add(new Rule(Pattern.compile(t + "(?=/)"), "<tmp>"));
            }
            rules = List.copyOf(r);
        }
    }

    private HostPaths() {}

    private static Set<Path> forms(Path p) {
        Set<Path> out = new LinkedHashSet<>();
        Path abs = p.toAbsolutePath().normalize();
        out.add(abs);
        try {
            out.add(abs.toRealPath());
        } catch (IOException | SecurityException e) {
            // not there: its given form only
        }
        return out;
    }

    /**
     * Hides a server's workdir root too: paths under it become relative to it.
     *
     * @param root the root
     */
    public static synchronized void addRoot(Path root) {
        List<Rule> next = new ArrayList<>();
        for (Path p : forms(root)) {
            if (ROOTS.add(p.toString())) {
                String r = Pattern.quote(p.toString());
                next.add(new Rule(Pattern.compile(r + "/"), ""));
                next.add(new Rule(Pattern.compile(r + END), "."));
            }
        }
        next.addAll(rules); // roots first: they may be under the temporary directory
        rules = List.copyOf(next);
    }

    /**
     * A message without host paths.
     *
     * @param message the message, or {@code null}
     * @return the scrubbed message
     */
    public static String scrub(String message) {
        if (message == null || message.isEmpty()) {
            return message;
        }
        String out = message;
        out = SEARCH_PATH.matcher(out).replaceAll("");
        if (PATH != null && !PATH.isEmpty()) {
            out = out.replace(PATH, "$PATH");
        }
        for (Rule r : rules) {
            out = r.pattern.matcher(out).replaceAll(Matcher.quoteReplacement(r.replacement));
        }
        return out;
    }
}
