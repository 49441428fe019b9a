package dev.sandbox.implementation.files;

import java.nio.ByteBuffer;

/**
 * One piece of a directory tree in transit, in order: an {@link Entry}, then for a file exactly {@link Entry#size()}
 * bytes of {@link Data}, then the next entry. A directory comes before everything beneath it.
 */
public sealed interface TreeItem {

    /** Kinds of entries a tree transfer carries. */
    enum Kind {
        /** A regular file; its content follows. */
        FILE,
        /** A directory. */
        DIRECTORY,
        /** A symbolic link, copied as a link. */
        SYMLINK
    }

    /**
     * An entry of the tree.
     *
     * @param name its path relative to the tree's root, {@code /}-separated, checked by {@link TreeNames#check}
     * @param kind its kind
     * @param mode its permission bits ({@code 07777})
     * @param size the content's size for a file, else 0
     * @param linkTarget the link's target for a symbolic link, else {@code ""}
     */
    record Entry(String name, Kind kind, int mode, long size, String linkTarget) implements TreeItem {}

    /**
     * Content bytes of the last file entry.
     *
     * @param bytes the bytes, owned by the item
     */
    record Data(ByteBuffer bytes) implements TreeItem {}
}
