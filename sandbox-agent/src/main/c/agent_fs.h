/*
 * agent_fs.h: the file operations and watches of sandbox-agent, independent of the protocol (agent.c and the files
 * agent.h lists; agent_files.c and agent_watch.c turn requests into these calls).
 *
 * Every function returns 0 (or a count) on success and -errno on failure; nothing here writes to stdout/stderr,
 * blocks on anything but the local file system, or follows a symlink where PROTOCOL.md says it does not.
 * Paths are absolute and NUL-free (the caller checked). Memory handed out is malloc'd and freed by the named
 * functions. Encoding into frames is the caller's job.
 */
#ifndef SANDBOX_AGENT_FS_H
#define SANDBOX_AGENT_FS_H

#include <stddef.h>
#include <stdint.h>

/* The prefix of the temporary files of fs_write_*; watches never report such names. */
#define FS_TEMP_PREFIX ".dev-sandbox-write-"

/* Event queue bound per watch; beyond it events are dropped and one FS_EV_OVERFLOW is queued. */
#define FS_WATCH_QUEUE 1024

enum { FS_FILE = 1, FS_DIR = 2, FS_SYMLINK = 3, FS_OTHER = 4 };
enum { FS_EV_CREATED = 1, FS_EV_MODIFIED = 2, FS_EV_DELETED = 3, FS_EV_OVERFLOW = 4 };

/* What lstat says, as PROTOCOL.md's `info`. path and link are malloc'd (link is "" unless a symlink). */
struct fs_info {
    uint8_t type;
    uint32_t mode; /* st_mode & 07777 */
    uint32_t uid, gid;
    uint64_t size;
    int64_t mtime_ns;
    char *path;
    char *link;
};

void fs_info_free(struct fs_info *info);

/* lstat(path) into *out. */
int fs_stat(const char *path, struct fs_info *out);

/* mkdir; with parents: creates missing parents (0755) and succeeds on an existing directory. */
int fs_mkdir(const char *path, uint32_t mode, int parents);

/* Removes a file or an empty directory; with recursive, a directory tree, never following symlinks. */
int fs_remove(const char *path, int recursive);

/* rename(2). */
int fs_move(const char *from, const char *to);

/* symlink(2): makes path a link to target (stored as given); -EEXIST when path exists. */
int fs_symlink(const char *target, const char *path);

/* Sets the permission bits (07777, else -EINVAL) of what path names without following a final symlink; a symlink
 * itself is left as it is (0). */
int fs_chmod(const char *path, uint32_t mode);

/* Opens a regular file for reading, positioned at offset: the fd (O_CLOEXEC), or -EISDIR / -EINVAL (not a regular
 * file: device, pipe, socket; opened O_NONBLOCK so a FIFO cannot block) / -errno. */
int fs_open_read(const char *path, uint64_t offset);

/* An atomic write: a temporary file FS_TEMP_PREFIX<random> next to the target, renamed over it at commit. */
struct fs_write;
/* parents: create missing parent directories (0755). mode: permission bits of a new file; an existing target keeps
 * its own (and its owner when the agent may set it). */
int fs_write_begin(const char *path, uint32_t mode, int parents, struct fs_write **out);
int fs_write_data(struct fs_write *w, const void *bytes, size_t n);
/* Renames over the target, fills *info (may be NULL), frees w whatever the result. */
int fs_write_commit(struct fs_write *w, struct fs_info *info);
/* Unlinks the temporary file and frees w. */
void fs_write_abort(struct fs_write *w);

/* A directory listing to a depth (1: the directory's own entries), depth first, symlinks not followed,
 * "." and ".." skipped. Holds at most one open directory per level (depth is at most 64). */
struct fs_list;
int fs_list_open(const char *path, uint32_t depth, struct fs_list **out); /* -ENOTDIR, -ENOENT, ... */
/* 1 and *out filled (free with fs_info_free), 0 at the end, -errno on a read error. */
int fs_list_next(struct fs_list *l, struct fs_info *out);
void fs_list_close(struct fs_list *l);

/* An inotify watch of a directory, with recursive: of its subdirectories too, including ones created later. */
struct fs_watch;
int fs_watch_open(const char *path, int recursive, struct fs_watch **out);
/* The inotify fd (non-blocking, close-on-exec) to poll for readability. */
int fs_watch_fd(const struct fs_watch *w);
/* Reads what inotify has and queues the events (bounded, see FS_WATCH_QUEUE). 0 or -errno. */
int fs_watch_read(struct fs_watch *w);
/* Pops the next queued event: 1 with *kind and *path (malloc'd, absolute), 0 when the queue is empty. */
int fs_watch_next(struct fs_watch *w, uint8_t *kind, char **path);
void fs_watch_close(struct fs_watch *w);

#endif
