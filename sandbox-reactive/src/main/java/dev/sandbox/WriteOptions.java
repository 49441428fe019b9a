package dev.sandbox;

/**
 * How {@link SandboxFiles#write(String, org.reactivestreams.Publisher, WriteOptions)} writes a file. Immutable; each
 * {@code with} method returns a copy.
 *
 * <p>By default missing parent directories are created (mode {@code 0755} where the provider sets one), as E2B's SDK
 * does: writing {@code out/2024/report.csv} needs no {@code mkdir} first. Turn it off to have a missing parent fail
 * with {@link FileOperationException.Reason#NOT_FOUND} instead.
 *
 * <pre>{@code
 * files.write("out/2024/report.csv", bytes).block(timeout);                  // creates out/2024
 * files.write("existing/only.txt", bytes, WriteOptions.defaults().withCreateParents(false)).block(timeout);
 * }</pre>
 *
 * @param createParents whether missing parent directories are created
 */
public record WriteOptions(boolean createParents) {

    private static final WriteOptions DEFAULTS = new WriteOptions(true);

    /**
     * The defaults: parents created.
     *
     * @return the default options
     */
    public static WriteOptions defaults() {
        return DEFAULTS;
    }

    /**
     * A copy that does or does not create missing parent directories.
     *
     * @param create whether to create them
     * @return the new options
     */
    public WriteOptions withCreateParents(boolean create) {
        return new WriteOptions(create);
    }
}
