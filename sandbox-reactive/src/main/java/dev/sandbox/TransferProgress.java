package dev.sandbox;

/**
 * How far a directory (or file) transfer of {@link SandboxFiles#upload(java.nio.file.Path, String,
 * java.util.function.Consumer) upload} or {@link SandboxFiles#download(String, java.nio.file.Path,
 * java.util.function.Consumer) download} has come: entries and content bytes moved so far.
 *
 * <pre>{@code
 * session.files()
 *     .upload(Path.of("project"), "project", p -> log.info("{} entries, {} bytes", p.entries(), p.bytes()))
 *     .block(Duration.ofMinutes(5));
 * }</pre>
 *
 * @param entries entries (files, directories, symbolic links) done so far; 1 for a single file once it is done
 * @param bytes bytes of file content moved so far
 */
public record TransferProgress(long entries, long bytes) {}
