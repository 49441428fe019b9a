/*
 * agent.h: what the files of sandbox-agent share: the protocol's constants (PROTOCOL.md, version 1), the objects of
 * the loop (connections, streams, processes, the ready list) and the functions one file offers the others.
 *
 * One file per job:
 *   agent.c          the server loop (epoll, the ready list, the graveyard, signals, timers) and main
 *   agent_frame.c    frames: the output queue, the agent frames every file sends, the client payload reader
 *   agent_conn.c     connections: accept, the relay's handoff, reading frames off the input, flushing, closing
 *   agent_request.c  a frame to its handler: HELLO, PING, TIMERS, and the request prologue every handler shares
 *   agent_stream.c   the streams of a connection: the table, ended ids, the frames on an open stream (credit, close)
 *   agent_proc.c     running processes: stdin, foreground OUTPUT, signals, terminal size, reaping, EXIT
 *   agent_spawn.c    SPAWN: pipes or a terminal, fork, the child's set-up, exec
 *   agent_bg.c       background processes: output rings, ATTACH, INPUT, PROCS
 *   agent_files.c    the file requests (STAT .. CHMOD, READ, WRITE, LIST) over agent_fs.c
 *   agent_watch.c    WATCH over agent_fs.c's inotify watches
 *   agent_tunnel.c   CONNECT: a TCP connection to a port on the sandbox's loopback, carried on a stream
 *   agent_listen.c   LISTEN: a TCP listener on the sandbox's loopback, each accepted connection on a new agent stream
 *   agent_relay.c    the relay mode and the socket address
 *   agent_install.c  the install mode: this binary copied into a directory (an init container's volume)
 *   agent_fs.c       the file system's part of the file requests and watches, without the protocol (agent_fs.h)
 */
#ifndef SANDBOX_AGENT_H
#define SANDBOX_AGENT_H

#include "agent_fs.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#define AGENT_VERSION "0.1.0"
#define PROTO_MIN 1
#define PROTO_MAX 1

#define MAX_CLIENT_PAYLOAD (2u << 20) /* 2 MiB */
#define CHUNK 65536u                  /* payload bytes per OUTPUT/DATA frame */
#define MAX_STR (1u << 20)
#define MAX_STRS 65536u
#define OUT_BOUND (256u * 1024)       /* pending output per connection before sources pause */
#define HANDOFF 0xFD                  /* the relay's one byte that carries its stdin and stdout */
#define STDIN_CREDIT (256u * 1024)    /* DATA credit of a process's stdin (bytes the agent may have to hold) */
#define WRITE_CREDIT (4u << 20)       /* DATA credit of a WRITE: written to disk as it comes, never held */
#define INBUF_CAP (64u * 1024)
#define MAX_CONNS 64
#define MAX_STREAMS 4096
#define MAX_BG 1024
#define RECENT_IDS 4096               /* ended stream ids remembered per connection to refuse reuse */
#define RING_MIN 65536u
#define RING_MAX (64u << 20)
#define BURST 4                       /* frames a task produces per turn before yielding (fairness) */
#define LAUNCH_TIMEOUT_MS 5000
#define CONNECT_TIMEOUT_MS 5000       /* how long a CONNECT may take to reach its port */
#define PTY_HUP_MS 250 /* how long after its command was reaped a PTY's empty master means its end */
#define DRAIN_MS 2000                 /* how long a closing connection may take to flush its last frames */
#define DEFAULT_SOCKET "dev.sandbox.agent"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

enum {
    T_HELLO = 0x01, T_PING = 0x02, T_TIMERS = 0x03, T_SPAWN = 0x10, T_DATA = 0x11, T_EOF = 0x12, T_SIGNAL = 0x13,
    T_RESIZE = 0x14, T_CREDIT = 0x15, T_CLOSE = 0x1F, T_READ = 0x20, T_WRITE = 0x21, T_LIST = 0x22, T_STAT = 0x23,
    T_MKDIR = 0x24, T_REMOVE = 0x25, T_MOVE = 0x26, T_WATCH = 0x27, T_SYMLINK = 0x28, T_CHMOD = 0x29, T_PROCS = 0x30, T_ATTACH = 0x31, T_INPUT = 0x32,
    T_CONNECT = 0x33, T_LISTEN = 0x34,
    A_OK = 0x80, A_HELLO = 0x81, A_PONG = 0x82, A_CREDIT = 0x83, A_STARTED = 0x90, A_OUTPUT = 0x91, A_EXIT = 0x92,
    A_DATA = 0x94, A_END = 0x95, A_ENTRY = 0x96, A_EVENT = 0x97, A_READY = 0x98, A_PROC = 0x99, A_ACCEPTED = 0x9A,
    A_ERROR = 0xEE
};
enum { E_BAD_FRAME = 1000, E_VERSION = 1001, E_LIMIT = 1002, E_OFFSET_GONE = 1003, E_NO_PROCESS = 1004 };
enum { F_PTY = 1, F_STDIN = 2, F_BACKGROUND = 4 };
enum { EV_LISTEN = 1, EV_LISTEN_CHANNEL, EV_SIGNAL, EV_CONN_IN, EV_CONN_OUT, EV_CONN_LIFE, EV_PROC, EV_WATCH, EV_TUNNEL, EV_TCP_LISTEN };
enum { TK_CONN = 1, TK_PROC, TK_STREAM };
enum { ST_SPAWN = 1, ST_READ, ST_WRITE, ST_LIST, ST_WATCH, ST_PROCS, ST_ATTACH, ST_TUNNEL, ST_LISTEN };

/* What epoll hands back: the object and which of its fds. */
struct evtag {
    uint8_t kind;
    uint8_t fd;
    void *obj;
};

/* An entry of the ready list: something with work it can do now. */
struct task {
    struct task *prev, *next;
    uint8_t kind, queued;
};

struct ring {
    uint8_t *buf;
    uint64_t cap, start, end; /* holds bytes [start, end) of the fd's stream; byte o lives at buf[o % cap] */
};

struct conn;
struct stream;
struct tunnel;   /* agent_tunnel.c's own */
struct listener; /* agent_listen.c's own */

struct proc {
    struct task task;
    struct proc *prev, *next;   /* every process */
    struct proc *bprev, *bnext; /* background ones, oldest first */
    pid_t pid;
    int pty, bg, reaped, status, signaled, oom, overflow, dead;
    int fd[3];                  /* 0: stdin write end (PTY: a dup of the master), 1: stdout or master, 2: stderr */
    struct evtag tag[3];
    uint8_t readable[3], eof[3], writable;
    uint64_t total[3];          /* bytes read from fd 1 and 2 */
    uint8_t *inb;               /* stdin bytes the pipe did not take yet */
    size_t inb_len, inb_off;
    int eof_sent;               /* a terminal's EOF character was written */
    int in_eof;                 /* close stdin once inb is written (a terminal gets its EOF character instead) */
    struct proc *hnext;         /* pid hash chain */
    uint64_t oom0, seq;
    int64_t started_ms, ended_ms;
    char id[24];
    struct stream *owner;       /* a foreground process's stream */
    struct ring ring[3];        /* background: output rings */
    struct stream *readers;     /* background: attached streams */
    uint64_t had[3];            /* background: the furthest offset a following reader has had, per fd (THROTTLE) */
    int killed;                 /* background: SIGKILL was sent through INPUT */
    int64_t reaped_mono;        /* PTY: when its command was reaped */
    int hup;                    /* PTY: reaped a while ago; an empty master now means its end */
    char **argv;                /* background: for PROCS */
};

struct stream {
    struct task task;
    struct conn *c;
    struct stream *prev, *next, *hnext; /* connection list, id hash chain */
    struct stream *rprev, *rnext;       /* readers of a background process */
    uint32_t id;
    int kind, dead;
    uint64_t credit;            /* fd 0 credit (READ, LIST, WATCH, PROCS, CONNECT) */
    uint64_t cred[3];           /* OUTPUT credit per fd (SPAWN, ATTACH) */
    uint64_t data_credit;       /* what the client may still send in DATA */
    struct proc *proc;          /* SPAWN (foreground) or ATTACH */
    int fd;                     /* READ */
    uint64_t remaining;         /* READ */
    struct fs_write *w;         /* WRITE */
    struct fs_list *list;       /* LIST */
    struct fs_info pend;        /* LIST: an entry waiting for credit */
    int has_pend;
    struct fs_watch *watch;     /* WATCH */
    struct evtag wtag;
    uint8_t ev_kind;            /* WATCH: an event waiting for credit */
    char *ev_path;
    uint64_t after_seq;         /* PROCS: the last process listed */
    uint64_t pos[3], limit[3];  /* ATTACH */
    int follow;
    struct tunnel *tun;         /* CONNECT, and a LISTEN's accepted connection */
    uint32_t listener;          /* an accepted connection: its LISTEN stream's id (looked up, never pointed at) */
    struct listener *lis;       /* LISTEN */
};

#define HASH_BUCKETS 1024
struct conn {
    struct task task;
    struct conn *prev, *next, *dnext;
    int in_fd, out_fd, dead, closing, hello, dirty;
    int handoff;                /* a socket connection whose first byte may hand over a relay's stdin and stdout */
    int life_fd;                /* after a handoff: the relay's socket, whose end ends the connection; else -1 */
    struct evtag tin, tout, tlife;
    uint8_t readable, writable;
    uint8_t *ob;                /* output queue */
    size_t ob_cap, ob_head, ob_tail;
    uint8_t *ib;                /* input buffer */
    size_t ib_len, ib_off;
    uint8_t hdr[9];             /* header of a payload too big for ib, read into big */
    uint8_t *big;
    size_t big_len, big_got;
    int64_t close_deadline;
    uint64_t agent_ids;         /* stream ids the agent opened (LISTEN's connections): the next is 2^31 + this */
    struct stream *streams;
    int nstreams;
    struct stream **hash;
    uint32_t recent[RECENT_IDS]; /* ended ids, a ring with a hash chain for lookup */
    int16_t rnext[RECENT_IDS], rhead[HASH_BUCKETS];
    size_t recent_n, recent_i;
};

struct agent {
    int ep, sfd, lfd, mode; /* mode: 'i' init, 's' stdio */
    int cfd;                /* the channel socket (--channel), or -1 */
    int64_t deadline_ms, idle_ms, last_activity;
    struct conn *conns;
    int nconns;
    struct proc *procs, *bg_head, *bg_tail;
    struct proc *phash[4096]; /* by pid, for reaping */
    int nbg, running;
    int tunnels;              /* CONNECT, LISTEN and accepted streams open: like a running process, they keep the
                               * idle timer off */
    int pty_waiting;          /* reaped PTYs whose master has not reported its end yet */
    struct tunnel *dial_head, *dial_tail; /* CONNECTs still connecting, oldest (first to time out) first */
    uint64_t next_seq;
    struct task *rq_head, *rq_tail;
    size_t rq_len;
    struct conn *dirty;
    void **grave; /* objects to free after this turn's events */
    int ngrave, grave_cap;
    struct evtag tlisten, tchannel, tsig;
    struct rlimit nofile; /* the limit we were given, restored in children */
};

extern struct agent G; /* the agent's one state, defined in agent.c */

/* A client payload being decoded: the rd_* functions (agent_frame.c) read fields in order and, at the first one
 * that does not fit, set err and read zeros from then on. */
struct rd {
    const uint8_t *p;
    size_t n, off;
    const char *err; /* first problem, NULL while the payload parses */
};

#define REQ_STRS 2
/* A request that names a new stream (TIMERS, SPAWN, the file requests, WATCH, PROCS, ATTACH, INPUT, CONNECT,
 * LISTEN) on its way through its handler: the payload to decode, and the strings decoded from it, freed once the
 * handler returns. */
struct req {
    struct conn *c;
    uint32_t id;
    uint8_t type;
    int answered;               /* its id is used up: no stream stays open for it */
    struct rd r;
    char *str[REQ_STRS];        /* what req_cstr decoded */
    char **strv[REQ_STRS];      /* what req_strs decoded */
    int nstr, nstrv;
};

/* ---------- encoding agent frames into a connection's output queue ---------- */

uint8_t *out_reserve(struct conn *c, size_t n);

static inline size_t pending(const struct conn *c) { return c->ob_tail - c->ob_head; }
static inline int room(const struct conn *c) { return !c->dead && pending(c) < OUT_BOUND; }
static inline void mark_dirty(struct conn *c) {
    if (!c->dirty) {
        c->dirty = 1;
        c->dnext = G.dirty;
        G.dirty = c;
    }
}

static inline void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static inline void put32(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static inline void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, (uint32_t)v); }

/* A frame being built at the tail of a connection's queue. */
struct fw {
    struct conn *c;
    uint8_t *p;
    size_t n;
};

static inline struct fw fw_begin(struct conn *c, uint8_t type, uint32_t stream, size_t max_payload) {
    struct fw f = {c, out_reserve(c, 9 + max_payload), 9};
    f.p[4] = type;
    put32(f.p + 5, stream);
    return f;
}
static inline void fw_u8(struct fw *f, uint8_t v) { f->p[f->n++] = v; }
static inline void fw_u16(struct fw *f, uint16_t v) { put16(f->p + f->n, v); f->n += 2; }
static inline void fw_u32(struct fw *f, uint32_t v) { put32(f->p + f->n, v); f->n += 4; }
static inline void fw_u64(struct fw *f, uint64_t v) { put64(f->p + f->n, v); f->n += 8; }
static inline void fw_bytes(struct fw *f, const void *b, size_t n) { memcpy(f->p + f->n, b, n); f->n += n; }
static inline void fw_str(struct fw *f, const char *s, size_t n) { fw_u32(f, (uint32_t)n); fw_bytes(f, s, n); }
static inline void fw_end(struct fw *f) {
    put32(f->p, (uint32_t)(f->n - 9));
    f->c->ob_tail += f->n;
    mark_dirty(f->c);
}

/* ---------- the functions one file offers the others, by file ---------- */

/* agent.c: memory that is there or the end of the agent, clocks, the graveyard, the ready list, epoll */
void fatal(const char *what);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
int64_t now_ms(void);
int64_t mono_ms(void);
void set_nonblock(int fd);
void bury(void *p);
void task_ready(struct task *t);
void task_cancel(struct task *t);
int ep_add(int fd, uint32_t events, struct evtag *tag);
void ep_del(int fd);

/* agent_bg.c: *_run are the tasks the ready list runs, h_* the request handlers (here and below) */
void bg_run(struct proc *p);
void reader_detach(struct stream *s);
void attach_run(struct stream *s);
void h_attach(struct req *q);
void h_input(struct req *q);
void h_procs(struct req *q);
void procs_run(struct stream *s);

/* agent_conn.c */
void conn_finish(struct conn *c);
void conn_close(struct conn *c);
void bad_frame(struct conn *c, const char *fmt, ...);
void conn_flush(struct conn *c);
void conn_run(struct conn *c);
struct conn *conn_new(int in_fd, int out_fd);
void accept_all(int lfd, int handoff);

/* agent_files.c */
void h_fs_simple(struct req *q);
void h_read(struct req *q);
void read_run(struct stream *s);
void h_write(struct req *q);
void write_data(struct stream *s, const uint8_t *b, size_t n);
void write_commit(struct stream *s);
void h_list(struct req *q);
void list_run(struct stream *s);

/* agent_frame.c (and out_reserve above) */
void send_empty(struct conn *c, uint8_t type, uint32_t id);
void send_verror(struct conn *c, uint32_t id, uint32_t code, const char *fmt, va_list ap);
void send_error(struct conn *c, uint32_t id, uint32_t code, const char *fmt, ...);
void send_credit(struct conn *c, uint32_t id, uint8_t fd, uint32_t bytes);
size_t info_size(const struct fs_info *i);
void fw_info(struct fw *f, const struct fs_info *i);
uint8_t rd_u8(struct rd *r);
uint16_t rd_u16(struct rd *r);
uint32_t rd_u32(struct rd *r);
uint64_t rd_u64(struct rd *r);
const char *rd_str(struct rd *r, size_t *len);
char *rd_cstr(struct rd *r, int *nul);
void free_strv(char **v);
char **rd_strs(struct rd *r, size_t *count, int *nul);

/* agent_install.c */
int install_self(const char *dir);

/* agent_proc.c */
uint64_t oom_kills(void);
void proc_close_fd(struct proc *p, int i);
void proc_free(struct proc *p);
void proc_orphan(struct proc *p);
int proc_ended(const struct proc *p);
void send_exit(struct conn *c, uint32_t id, const struct proc *p);
size_t stdin_flush(struct proc *p);
size_t stdin_push(struct proc *p, const uint8_t *b, size_t n);
void fg_run(struct proc *p);
void reap(void);
void proc_signal(struct proc *p, uint32_t sig);
void proc_resize(struct proc *p, uint16_t cols, uint16_t rows);
void spawn_data(struct stream *s, const uint8_t *b, size_t n);
void spawn_eof(struct stream *s);

/* agent_relay.c */
int make_addr(const char *name, struct sockaddr_un *a, socklen_t *len);
int relay(const char *name);

/* agent_request.c: the request prologue (see req_begin) and the dispatch */
char *req_cstr(struct req *q, int *nul);
char **req_strs(struct req *q, size_t *count, int *nul);
void req_keep(struct req *q, char **v);
int req_begin(struct req *q, int opens, const char *why);
void req_fail(struct req *q, uint32_t code, const char *fmt, ...);
int req_path(struct req *q, const char *path, int nul);
int known_type(uint8_t t);
void handle_frame(struct conn *c, uint8_t type, uint32_t id, const uint8_t *payload, size_t len);

/* agent_spawn.c */
void h_spawn(struct req *q);

/* agent_stream.c */
struct stream *stream_find(struct conn *c, uint32_t id);
int recent_has(struct conn *c, uint32_t id);
void recent_add(struct conn *c, uint32_t id);
struct stream *stream_new(struct conn *c, uint32_t id, int kind);
void stream_drop(struct stream *s);
void stream_run(struct stream *s);
void h_stream_op(struct conn *c, uint8_t type, uint32_t id, struct rd *r);

/* agent_tunnel.c */
void h_connect(struct req *q);
void tunnel_event(struct stream *s, uint32_t events);
void tunnel_run(struct stream *s);
void tunnel_data(struct stream *s, const uint8_t *b, size_t n);
void tunnel_eof(struct stream *s);
void tunnel_drop(struct stream *s);
int64_t tunnel_expire(int64_t mono);
struct stream *tunnel_new(struct conn *c, uint32_t id, int fd, uint16_t port, uint32_t credit, uint32_t listener);
int tunnel_accepted(struct conn *c, uint32_t id, int fd, uint16_t port, uint32_t credit, uint32_t listener,
                    uint16_t peer_port);

/* agent_listen.c */
void h_listen(struct req *q);
void listen_event(struct stream *s);
void listen_run(struct stream *s);
void listen_drop(struct stream *s);
void listen_release(struct conn *c, uint32_t listener);

/* agent_watch.c */
void h_watch(struct req *q);
void watch_run(struct stream *s);
void watch_event(struct stream *s);

#endif
