package dev.sandbox.mcp.implementation;

/** Text from a sandbox or a client shown on one line of an answer: control characters escaped, length capped. */
final class Escape {
    private static final int MAX_CHARS = 512;

    private Escape() {}

    /**
     * The text with its control characters as {@code \\uXXXX} (so it cannot forge lines), cut at 512 characters.
     *
     * @param s the text
     * @return the escaped text
     */
    static String line(String s) {
        StringBuilder out = new StringBuilder(Math.min(s.length(), MAX_CHARS) + 8);
        for (int i = 0; i < s.length() && i < MAX_CHARS; i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        if (s.length() > MAX_CHARS) {
            out.append("...");
        }
        return out.toString();
    }
}
