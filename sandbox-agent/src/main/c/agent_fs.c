/*
 * agent_fs.c (stub): every operation fails with -ENOSYS until the real file operations are merged.
 */
#include "agent_fs.h"

#include <errno.h>
#include <stdlib.h>

void fs_info_free(struct fs_info *info) {
    if (info) {
        free(info->path);
        free(info->link);
        info->path = info->link = NULL;
    }
}
int fs_stat(const char *path, struct fs_info *out) { (void)path; (void)out; return -ENOSYS; }
int fs_mkdir(const char *path, uint32_t mode, int parents) { (void)path; (void)mode; (void)parents; return -ENOSYS; }
int fs_remove(const char *path, int recursive) { (void)path; (void)recursive; return -ENOSYS; }
int fs_move(const char *from, const char *to) { (void)from; (void)to; return -ENOSYS; }
int fs_open_read(const char *path, uint64_t offset) { (void)path; (void)offset; return -ENOSYS; }
int fs_write_begin(const char *path, uint32_t mode, int parents, struct fs_write **out) {
    (void)path; (void)mode; (void)parents; *out = NULL; return -ENOSYS;
}
int fs_write_data(struct fs_write *w, const void *bytes, size_t n) { (void)w; (void)bytes; (void)n; return -ENOSYS; }
int fs_write_commit(struct fs_write *w, struct fs_info *info) { (void)w; (void)info; return -ENOSYS; }
void fs_write_abort(struct fs_write *w) { (void)w; }
int fs_list_open(const char *path, uint32_t depth, struct fs_list **out) {
    (void)path; (void)depth; *out = NULL; return -ENOSYS;
}
int fs_list_next(struct fs_list *l, struct fs_info *out) { (void)l; (void)out; return -ENOSYS; }
void fs_list_close(struct fs_list *l) { (void)l; }
int fs_watch_open(const char *path, int recursive, struct fs_watch **out) {
    (void)path; (void)recursive; *out = NULL; return -ENOSYS;
}
int fs_watch_fd(const struct fs_watch *w) { (void)w; return -1; }
int fs_watch_read(struct fs_watch *w) { (void)w; return -ENOSYS; }
int fs_watch_next(struct fs_watch *w, uint8_t *kind, char **path) { (void)w; (void)kind; (void)path; return 0; }
void fs_watch_close(struct fs_watch *w) { (void)w; }
