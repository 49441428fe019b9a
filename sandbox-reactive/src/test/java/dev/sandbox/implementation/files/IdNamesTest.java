package dev.sandbox.implementation.files;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Names from passwd and group files, malformed and oversized ones included. */
class IdNamesTest {

    @Test
    void namesComeFromWellFormedLinesOnly(@TempDir Path dir) throws Exception {
        Path passwd = Files.writeString(
                dir.resolve("passwd"),
                "root:x:0:0:root:/root:/bin/sh\n"
                        + "# a comment:x:5\n"
                        + "broken line\n"
                        + "neg:x:-3:0::/:/bin/false\n"
                        + "nan:x:abc:0::/:/bin/false\n"
                        + ":x:7:7::/:/bin/false\n"
                        + "alice:x:1000:1000::/home/alice:/bin/sh\n"
                        + "again:x:1000:1000::/:/bin/sh\n"
                        + "big:x:4294967294:4294967294::/:/bin/sh");
        Path group = Files.writeString(dir.resolve("group"), "wheel:x:10:alice\nstaff::20:\n");
        IdNames names = new IdNames(passwd, group);
        assertThat(names.user(0)).contains("root");
        assertThat(names.user(1000)).contains("alice"); // the first line with an id wins
        assertThat(names.user(4294967294L)).contains("big");
        assertThat(names.user(5)).isEmpty();
        assertThat(names.user(7)).isEmpty();
        assertThat(names.user(-1)).isEmpty();
        assertThat(names.group(10)).contains("wheel");
        assertThat(names.group(20)).contains("staff");
        assertThat(names.group(0)).isEmpty();
    }

    @Test
    void aMissingOrHugeFileCostsLittle(@TempDir Path dir) throws Exception {
        IdNames none = new IdNames(dir.resolve("nope"), dir.resolve("nope2"));
        assertThat(none.user(0)).isEmpty();
        assertThat(none.group(0)).isEmpty();

        // past the read bound: the entries after it are not seen, nothing fails
        StringBuilder text = new StringBuilder("first:x:1:1::/:/bin/sh\n");
        while (text.length() <= IdNames.MAX_BYTES) {
            text.append("#".repeat(1000)).append('\n');
        }
        text.append("late:x:2:2::/:/bin/sh\n");
        Path huge = Files.write(dir.resolve("huge"), text.toString().getBytes(StandardCharsets.UTF_8));
        IdNames names = new IdNames(huge, huge);
        assertThat(names.user(1)).contains("first");
        assertThat(names.user(2)).isEmpty();
    }
}
