package dev.sandbox.readme;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fenced blocks of README.md that this module runs or checks: every block without a language (the README's shell
 * blocks and outputs) and every block marked {@code <!-- readme-commands: ... -->}, each with the marker on the line
 * before it.
 */
final class Readme {
    private static final Pattern MARKER = Pattern.compile("<!--\\s*readme-commands:\\s*(.+?)\\s*-->");

    /**
     * One fenced block.
     *
     * @param line the 1-based line of its opening fence
     * @param language what follows the opening fence ({@code ""} for none)
     * @param marker the text of its {@code readme-commands} marker, or {@code null} when the line before has none
     * @param text the block's content, without the fences
     */
    record Block(int line, String language, String marker, String text) {
        /** The block's commands: its lines with {@code \}-continuations joined, blank lines dropped. */
        List<String> commands() {
            List<String> commands = new ArrayList<>();
            StringBuilder pending = new StringBuilder();
            for (String line : text.lines().toList()) {
                if (line.endsWith("\\")) {
                    pending.append(line, 0, line.length() - 1);
                    continue;
                }
                pending.append(line);
                if (!pending.toString().isBlank()) {
                    commands.add(pending.toString().strip());
                }
                pending.setLength(0);
            }
            return commands;
        }

        String where() {
            return "README.md line " + line + (marker == null ? "" : " (" + marker + ")");
        }
    }

    private Readme() {}

    static List<Block> blocks(Path readme) throws IOException {
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String open = lines.get(i);
            if (!open.startsWith("```")) {
                continue;
            }
            String language = open.substring(3).strip();
            int close = i + 1;
            while (close < lines.size() && !lines.get(close).startsWith("```")) {
                close++;
            }
            String marker = null;
            int before = i - 1;
            while (before >= 0 && lines.get(before).isBlank()) {
                before--;
            }
            if (before >= 0) {
                Matcher m = MARKER.matcher(lines.get(before).strip());
                if (m.matches()) {
                    marker = m.group(1);
                }
            }
            if (language.isEmpty() || marker != null) {
                String text = String.join("\n", lines.subList(i + 1, Math.min(close, lines.size()))) + "\n";
                blocks.add(new Block(i + 1, language, marker, text));
            }
            i = close;
        }
        return blocks;
    }
}
