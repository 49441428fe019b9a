package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException.Reason;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the provider maps: errno to file errors, the agent's file info to the public one, spawn validation. */
class AgentTypesTest {

    @Test
    void errnosMapToFileErrorReasons() {
        assertThat(AgentErrnoException.reason(2)).isEqualTo(Reason.NOT_FOUND);
        assertThat(AgentErrnoException.reason(13)).isEqualTo(Reason.PERMISSION_DENIED);
        assertThat(AgentErrnoException.reason(1)).isEqualTo(Reason.PERMISSION_DENIED);
        assertThat(AgentErrnoException.reason(17)).isEqualTo(Reason.ALREADY_EXISTS);
        assertThat(AgentErrnoException.reason(20)).isEqualTo(Reason.NOT_A_DIRECTORY);
        assertThat(AgentErrnoException.reason(21)).isEqualTo(Reason.IS_A_DIRECTORY);
        assertThat(AgentErrnoException.reason(39)).isEqualTo(Reason.DIRECTORY_NOT_EMPTY);
        assertThat(AgentErrnoException.reason(28)).isEqualTo(Reason.DISK_FULL);
        assertThat(AgentErrnoException.reason(5)).isEqualTo(Reason.IO_ERROR);
        AgentErrnoException e = new AgentErrnoException("stat /w/x", 2, "/w/x: No such file or directory");
        assertThat(e).hasMessage("stat /w/x failed: ENOENT (2): /w/x: No such file or directory");
        assertThat(e.isRetryable()).isFalse();
        assertThat(e.toFileOperationException("x"))
                .satisfies(f -> assertThat(f.reason()).isEqualTo(Reason.NOT_FOUND))
                .satisfies(f -> assertThat(f.path()).isEqualTo("x"))
                .hasCause(e);
        assertThat(new AgentErrnoException("spawn", AgentErrnoException.LIMIT, "4096 streams").isRetryable())
                .isTrue();
    }

    @Test
    void fileInfoBecomesThePublicOne() {
        FileInfo link = new AgentFileInfo(3, 0777, 0, 0, 7, 1_700_000_000_123_456_789L, "/w/l", "target").toFileInfo();
        assertThat(link.name()).isEqualTo("l");
        assertThat(link.type()).isEqualTo(FileInfo.Type.SYMLINK);
        assertThat(link.symlinkTarget()).contains("target");
        assertThat(link.modifiedAt()).isEqualTo(Instant.ofEpochSecond(1_700_000_000L, 123_456_789));
        FileInfo root = new AgentFileInfo(2, 0755, 0, 0, 4096, -1, "/", "").toFileInfo();
        assertThat(root.type()).isEqualTo(FileInfo.Type.DIRECTORY);
        assertThat(root.symlinkTarget()).isEmpty();
        assertThat(root.modifiedAt()).isEqualTo(Instant.ofEpochSecond(0, -1));
        FileInfo suid = new AgentFileInfo(1, 04755, 0, 0, 1, 0, "/w/f", "").toFileInfo();
        assertThat(suid.mode()).isEqualTo(04755);
        assertThat(new AgentWatchEvent(AgentWatchEvent.Kind.DELETED, "/w/f").toFileEvent())
                .isEqualTo(new FileEvent(FileEvent.Kind.DELETED, "/w/f"));
        assertThat(new AgentWatchEvent(AgentWatchEvent.Kind.READY, "/w").toFileEvent())
                .isEqualTo(new FileEvent(FileEvent.Kind.READY, "/w"));
    }

    @Test
    void aSpawnIsValidatedNamingTheField() {
        assertThatThrownBy(() -> new AgentSpawn(List.of(), Map.of(), "", null, 0, 0))
                .hasMessageContaining("argv");
        assertThatThrownBy(() -> AgentSpawn.of("a\0b")).hasMessageContaining("argv");
        assertThatThrownBy(() -> new AgentSpawn(List.of("x"), Map.of("A=B", "c"), "", null, 0, 0))
                .hasMessageContaining("env name");
        assertThatThrownBy(() -> new AgentSpawn(List.of("x"), Map.of(), "/a\0", null, 0, 0))
                .hasMessageContaining("cwd");
        assertThatThrownBy(() -> AgentSpawn.of("sh").withPty(80, 0)).hasMessageContaining("terminal size");
        assertThat(new AgentSpawn(List.of("x"), Map.of("A", "1"), null, null, 0, 0).envEntries())
                .containsExactly("A=1");
    }
}
