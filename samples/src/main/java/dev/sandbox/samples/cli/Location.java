package dev.sandbox.samples.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A path on this machine or, written {@code SESSION:PATH}, in a session: {@code SESSION:PATH} when there is a colon and
 * what comes before the first one is a non-empty name without a slash (as scp reads it); otherwise a local path.
 *
 * @param session the session's id, or {@code null} for a local path
 * @param path the path; in a session, relative paths resolve against its workdir
 */
record Location(String session, String path) {
    boolean inSession() {
        return session != null;
    }

    @Override
    public String toString() {
        return inSession() ? session + ":" + path : path;
    }

    private static Location parse(String text, boolean emptyPathIsWorkdir) {
        if (text.isEmpty()) {
            throw new TypeConversionException("empty path");
        }
        int colon = text.indexOf(':');
        if (colon <= 0 || text.substring(0, colon).contains("/")) {
            return new Location(null, text);
        }
        String path = text.substring(colon + 1);
        if (path.isEmpty()) {
            if (!emptyPathIsWorkdir) {
                throw new TypeConversionException("missing path after '" + text + "'");
            }
            path = ".";
        }
        return new Location(text.substring(0, colon), path);
    }

    /** A local path or {@code SESSION:PATH} ({@code cp}'s SRC and DST). */
    static final class Any implements ITypeConverter<Location> {
        @Override
        public Location convert(String text) {
            return parse(text, false);
        }
    }

    /** {@code SESSION:PATH}, where {@code SESSION:} is the session's workdir ({@code ls-files}). */
    static final class InSession implements ITypeConverter<Location> {
        @Override
        public Location convert(String text) {
            Location location = parse(text, true);
            if (!location.inSession()) {
                throw new TypeConversionException("expected SESSION:PATH, got '" + text + "'");
            }
            return location;
        }
    }
}
