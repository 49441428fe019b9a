package dev.sandbox.implementation.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sandbox.FileOperationException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/** The host side of a download: what a hostile tree may try, and that nothing outside the target changes. */
class LocalTreeTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private Path outside;
    private Path canary;
    private Path target;

    @BeforeEach
    void setUp() throws IOException {
        outside = Files.createDirectories(dir.resolve("outside"));
        canary = Files.writeString(outside.resolve("canary"), "untouched");
        target = dir.resolve("work").resolve("out");
        Files.createDirectories(target.getParent());
    }

    private static TreeItem.Entry dirEntry(String name) {
        return new TreeItem.Entry(name, TreeItem.Kind.DIRECTORY, 0755, 0, "");
    }

    private static TreeItem.Entry link(String name, String to) {
        return new TreeItem.Entry(name, TreeItem.Kind.SYMLINK, 0777, 0, to);
    }

    private static List<TreeItem> file(String name, String content) {
        byte[] b = content.getBytes(StandardCharsets.UTF_8);
        return List.of(
                new TreeItem.Entry(name, TreeItem.Kind.FILE, 0644, b.length, ""),
                new TreeItem.Data(ByteBuffer.wrap(b)));
    }

    private FileOperationException fails(TreeItem... items) {
        Throwable t = catchThrowable(
                () -> LocalTree.write(Flux.just(items), target, null).block(WAIT));
        assertThat(t).isInstanceOf(FileOperationException.class);
        return (FileOperationException) t;
    }

    private void assertNothingChanged() throws IOException {
        assertThat(Files.readString(canary)).isEqualTo("untouched");
        try (Stream<Path> all = Files.walk(dir)) {
            assertThat(all.map(p -> dir.relativize(p).toString()))
                    .containsExactlyInAnyOrder("", "outside", "outside/canary", "work");
        }
    }

    private static TreeItem[] concat(Object... parts) {
        return Stream.of(parts)
                .flatMap(p -> p instanceof List<?> l ? l.stream() : Stream.of(p))
                .toArray(TreeItem[]::new);
    }

    @Test
    void aLinkThenAFileThroughItIsRefusedAndNothingOutsideIsTouched() throws IOException {
        // the link is legal on its own (it points inside the tree); the file through it must not be written
        FileOperationException e = fails(concat(link("l", "."), file("l/canary", "overwritten")));
        assertThat(e.reason()).isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
        assertThat(e).hasMessageContaining("l/canary");
        assertNothingChanged();
    }

    @Test
    void aLinkOutOfTheTreeIsRefusedEvenBeforeAnythingGoesThroughIt() throws IOException {
        FileOperationException e = fails(concat(link("l", "../../outside"), file("l/canary", "overwritten")));
        assertThat(e.path()).isEqualTo("l");
        assertNothingChanged();
        assertThat(fails(link("abs", outside.toString())).path()).isEqualTo("abs");
        assertNothingChanged();
    }

    @Test
    void aLinkOverAnEarlierEntryIsRefused() throws IOException {
        FileOperationException e = fails(concat(dirEntry("d"), link("d", ".")));
        assertThat(e).hasMessageContaining("same name");
        assertNothingChanged();
    }

    @Test
    void duplicatesAndEntriesBeneathFilesAreRefused() throws IOException {
        assertThat(fails(concat(file("a", "1"), file("a", "2")))).hasMessageContaining("same name");
        assertNothingChanged();
        assertThat(fails(concat(file("a", "1"), file("a/b", "2")))).hasMessageContaining("not a directory");
        assertNothingChanged();
        assertThat(fails(concat(file("x/y", "parent never sent")))).hasMessageContaining("'x'");
        assertNothingChanged();
    }

    @Test
    void namesThatClimbAreRefusedByTheWriterToo() throws IOException {
        assertThat(fails(concat(file("../outside/canary", "overwritten"))).reason())
                .isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
        assertThat(fails(concat(file("/abs", "x"))).reason())
                .isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
        assertNothingChanged();
    }

    @Test
    void contentThatDisagreesWithItsSizeFails() throws IOException {
        TreeItem.Entry f = new TreeItem.Entry("f", TreeItem.Kind.FILE, 0644, 2, "");
        assertThat(fails(f, new TreeItem.Data(ByteBuffer.allocate(3)))).hasMessageContaining("beyond the size");
        assertNothingChanged();
        assertThat(fails(f, new TreeItem.Data(ByteBuffer.allocate(1)), dirEntry("d")))
                .hasMessageContaining("ended before its size");
        assertNothingChanged();
        assertThat(fails(f)).hasMessageContaining("ended inside");
        assertNothingChanged();
    }

    @Test
    void anExistingTargetIsRefusedAndLeftAsItWas() throws IOException {
        Files.createDirectories(target);
        Files.writeString(target.resolve("mine"), "mine");
        assertThat(fails(concat(file("mine", "theirs"))).reason())
                .isEqualTo(FileOperationException.Reason.ALREADY_EXISTS);
        assertThat(Files.readString(target.resolve("mine"))).isEqualTo("mine");
    }

    /**
     * {@code p} relative to the working directory of this JVM (the test cannot change it): a relative path, with as
     * many {@code ..} as it takes, that the system resolves to {@code p}.
     */
    private static String relative(Path p) throws IOException {
        Path cwd = Path.of("").toAbsolutePath().toRealPath();
        return cwd.relativize(p.getParent().toRealPath().resolve(p.getFileName()))
                .toString();
    }

    private static List<TreeItem> flatTree() {
        return List.of(concat(file("a", "1"), dirEntry("d"), file("d/b", "2")));
    }

    @Test
    void relativeTargetsWithDotAndDotDotSegmentsAreWrittenWhereTheyLead() throws IOException {
        // "./out" made every entry look outside the target: the temporary directory's name kept the "."
        Path work = target.getParent();
        Files.createDirectories(work.resolve("sub"));
        String rel = relative(work);
        List<String> forms =
                List.of("./" + rel + "/out1", rel + "/./out2", rel + "/sub/../out3", "./" + rel + "/sub/./../././out4");
        for (String form : forms) {
            Path given = Path.of(form);
            assertThat(given.isAbsolute()).isFalse();
            assertThat(LocalTree.write(Flux.fromIterable(flatTree()), given, null)
                            .block(WAIT))
                    .as(form)
                    .isEqualTo(2);
        }
        for (String out : List.of("out1", "out2", "out3", "out4")) {
            assertThat(work.resolve(out).resolve("a")).as(out).hasContent("1");
            assertThat(work.resolve(out).resolve("d/b")).as(out).hasContent("2");
        }
        try (Stream<Path> siblings = Files.list(work)) {
            assertThat(siblings.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("sub", "out1", "out2", "out3", "out4");
        }
        assertThat(Files.readString(canary)).isEqualTo("untouched");
    }

    @Test
    void underARelativeTargetHostileEntriesAreStillRefused() throws IOException {
        target = Path.of("./" + relative(target.getParent()) + "/./out");
        assertThat(fails(concat(link("l", "."), file("l/canary", "overwritten")))
                        .reason())
                .isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
        assertNothingChanged();
        assertThat(fails(concat(link("l", "../../outside"), file("l/canary", "overwritten")))
                        .path())
                .isEqualTo("l");
        assertNothingChanged();
        assertThat(fails(concat(file("../outside/canary", "overwritten"))).reason())
                .isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
        assertThat(fails(concat(file("a/../../outside/canary", "overwritten"))).reason())
                .isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
        assertNothingChanged();
    }

    @Test
    void aTargetEndingInDotOrDotDotOrWithAMissingParentIsRefusedAndNothingIsMade() throws IOException {
        String rel = relative(target.getParent());
        target = Path.of(rel + "/.");
        assertThat(fails(concat(file("a", "1"))).reason()).isEqualTo(FileOperationException.Reason.ALREADY_EXISTS);
        target = Path.of(rel + "/..");
        assertThat(fails(concat(file("a", "1"))).reason()).isEqualTo(FileOperationException.Reason.ALREADY_EXISTS);
        target = Path.of(rel + "/missing/../out"); // the system resolves missing/.. only when missing exists
        assertThat(fails(concat(file("a", "1"))).reason()).isEqualTo(FileOperationException.Reason.NOT_FOUND);
        assertNothingChanged();
    }

    @Test
    void aTreeIsWrittenWithModesButNoSetuidAndDirectoriesStayUsable() throws IOException {
        List<TreeItem> items = List.of(
                new TreeItem.Entry("ro", TreeItem.Kind.DIRECTORY, 0555, 0, ""),
                new TreeItem.Entry("ro/suid", TreeItem.Kind.FILE, 04755, 1, ""),
                new TreeItem.Data(ByteBuffer.wrap(new byte[] {'x'})),
                link("ro/l", "suid"));
        List<LocalTree.TreeProgress> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        assertThat(LocalTree.write(Flux.fromIterable(items), target, seen::add).block(WAIT))
                .isEqualTo(1);
        assertThat(PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(target.resolve("ro/suid"), LinkOption.NOFOLLOW_LINKS)))
                .isEqualTo("rwxr-xr-x");
        assertThat(Files.getAttribute(target.resolve("ro/suid"), "unix:mode", LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(0100755);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target.resolve("ro"))))
                .isEqualTo("rwxr-xr-x");
        assertThat(Files.readSymbolicLink(target.resolve("ro/l"))).isEqualTo(Path.of("suid"));
        assertThat(seen.get(seen.size() - 1)).isEqualTo(new LocalTree.TreeProgress(3, 1));
        try (Stream<Path> siblings = Files.list(target.getParent())) {
            assertThat(siblings.map(p -> p.getFileName().toString())).containsExactly("out");
        }
    }

    @Test
    void aCancelHalfWayRemovesWhatWasWritten() throws Exception {
        java.util.concurrent.CountDownLatch first = new java.util.concurrent.CountDownLatch(1);
        Flux<TreeItem> items = Flux.concat(Flux.fromIterable(file("first", "written")), Flux.never());
        reactor.core.Disposable d =
                LocalTree.write(items, target, p -> first.countDown()).subscribe();
        assertThat(first.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        d.dispose(); // from a thread that may block: the partial tree is gone when it returns
        assertNothingChanged();
    }

    @Test
    void aFailureHalfWayRemovesWhatWasWritten() throws IOException {
        Flux<TreeItem> items = Flux.concat(
                Flux.fromIterable(file("first", "written")),
                Flux.error(new IllegalStateException("the sandbox went away")));
        Throwable t = catchThrowable(() -> LocalTree.write(items, target, null).block(WAIT));
        assertThat(t).hasMessageContaining("the sandbox went away");
        assertNothingChanged();
    }
}
