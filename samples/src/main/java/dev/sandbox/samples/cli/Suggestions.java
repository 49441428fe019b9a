package dev.sandbox.samples.cli;

import java.util.List;

/**
 * The CLI's one wording for what a mistyped word may have meant, {@code did you mean 'exec'?}, used for picocli's
 * suggestions (unknown subcommands and options) and the CLI's own (a value outside a fixed set).
 */
final class Suggestions {
    private Suggestions() {}

    /**
     * The hint line for the given candidates.
     *
     * @param candidates what the user may have meant, best first
     * @return {@code did you mean 'a'?} or {@code did you mean 'a' or 'b'?}, or {@code null} when there are none
     */
    static String didYouMean(List<String> candidates) {
        if (candidates.isEmpty()) {
            return null;
        }
        List<String> quoted =
                candidates.stream().limit(3).map(c -> "'" + c + "'").toList();
        String alternatives = quoted.size() == 1
                ? quoted.getFirst()
                : String.join(", ", quoted.subList(0, quoted.size() - 1)) + " or " + quoted.getLast();
        return "did you mean " + alternatives + "?";
    }

    /**
     * The words close to {@code text}: at most two edits away (a typo or a swapped pair), or starting with it.
     *
     * @param text what was given
     * @param words the words that are allowed
     * @return the close words, in the order of {@code words}
     */
    static List<String> closeTo(String text, List<String> words) {
        return words.stream()
                .filter(w -> !text.isEmpty() && (w.startsWith(text) || distance(text, w) <= 2))
                .toList();
    }

    /** The Levenshtein distance: insertions, deletions and substitutions. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
