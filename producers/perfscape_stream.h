/*
 * perfscape_stream.h - a producer of the perfscape stream protocol, version 1 (STREAM.md).
 * Single file, libc and POSIX sockets only. One ps_stream is one thread of execution
 * streaming to `perfscape serve --listen ADDR`:
 *
 *     #include "perfscape_stream.h"
 *     ps_stream s;
 *     if (ps_open(&s, NULL, rank, 0, "solver") != 0) { ... }  // NULL: $PERFSCAPE_STREAM
 *     ps_enter(&s, "timestep", NULL);
 *     ps_enter(&s, "MPI_Isend()", "MPI"); ps_send(&s, peer, nbytes); ps_exit(&s, "MPI_Isend()");
 *     ps_exit(&s, "timestep");
 *     ps_sample(&s, "iteration 1");      // a profile sample (TAU's snapshot); flushes
 *     ps_end(&s);                        // the thread ends; flushes and closes
 *
 * ADDR is tcp://HOST:PORT (numeric IPv4/IPv6 or a host name) or unix:PATH. Times are
 * CLOCK_REALTIME nanoseconds. Records are buffered (64 KiB) and flushed at each sample and at
 * the end. Every function returns 0, or -1 when the stream is broken (the server went away):
 * from then on calls do nothing, so a program keeps running without its stream.
 * Not thread-safe: one ps_stream per thread.
 *
 * With the environment variable PERFSCAPE_TAU_DIR set, ps_end also writes the thread's own
 * profile as TAU does at exit (`DIR/profile.RANK.0.THREAD`, TAU's profile file format: flat
 * timers and user events), built here from the same records by TAU's rules with the same
 * arithmetic as the server, so that the file and the streamed final sample can be compared
 * (crates/perfscape-live/tests/stream_producers.rs). Up to PS_MAX_TIMERS distinct regions,
 * PS_MAX_DEPTH open at once and PS_MAX_USER user events are kept for the file.
 */
#ifndef PERFSCAPE_STREAM_H
#define PERFSCAPE_STREAM_H

#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PS_PROTOCOL 1
#define PS_BUFFER 65536
#define PS_MAX_TIMERS 256
#define PS_MAX_DEPTH 128
#define PS_MAX_USER 128
#define PS_NAME 160

/* A flat timer of the thread's own profile (µs, as TAU). */
typedef struct ps_timer {
    char name[PS_NAME], group[48];
    double calls, subcalls, excl_us, incl_us;
    int open;
} ps_timer;

/* A user event of the thread's own profile. */
typedef struct ps_user {
    char name[PS_NAME];
    double count, max, min, sum, sumsq;
} ps_user;

typedef struct ps_stream {
    int fd;          /* the socket; -1 when broken or closed */
    size_t len;      /* bytes buffered */
    char buf[PS_BUFFER];
    /* The thread's own profile (written at ps_end when PERFSCAPE_TAU_DIR is set). */
    int rank, thread, ntimers, nusers, depth, overflow;
    ps_timer timers[PS_MAX_TIMERS];
    ps_user users[PS_MAX_USER];
    struct { int timer; int64_t start_ns, child_ns; } stack[PS_MAX_DEPTH];
} ps_stream;

static inline int ps_timer_of(ps_stream *s, const char *name, const char *group) {
    int i;
    for (i = 0; i < s->ntimers; i++)
        if (strcmp(s->timers[i].name, name) == 0) return i;
    if (s->ntimers == PS_MAX_TIMERS || strlen(name) >= PS_NAME) return -1;
    memset(&s->timers[i], 0, sizeof s->timers[i]);
    strcpy(s->timers[i].name, name);
    snprintf(s->timers[i].group, sizeof s->timers[i].group, "%s", group ? group : "TAU_USER");
    return s->ntimers++;
}

/* TAU's rules, as the server applies them (STREAM.md). */
static inline void ps_acc_enter(ps_stream *s, const char *region, const char *group, int64_t t) {
    int i = ps_timer_of(s, region, group);
    if (i < 0 || s->depth == PS_MAX_DEPTH) {
        s->overflow = 1;
        return;
    }
    if (s->depth > 0) s->timers[s->stack[s->depth - 1].timer].subcalls += 1;
    s->timers[i].calls += 1;
    s->timers[i].open += 1;
    s->stack[s->depth].timer = i, s->stack[s->depth].start_ns = t, s->stack[s->depth].child_ns = 0;
    s->depth++;
}

static inline void ps_acc_exit(ps_stream *s, int64_t t) {
    int64_t incl;
    ps_timer *tm;
    if (s->depth == 0 || s->overflow) return;
    s->depth--;
    tm = &s->timers[s->stack[s->depth].timer];
    incl = t - s->stack[s->depth].start_ns;
    if (incl < 0) incl = 0;
    tm->excl_us += (double)(incl - s->stack[s->depth].child_ns) / 1000.0;
    tm->open -= 1;
    if (tm->open == 0) tm->incl_us += (double)incl / 1000.0;
    if (s->depth > 0) s->stack[s->depth - 1].child_ns += incl;
}

static inline void ps_acc_value(ps_stream *s, const char *name, double v) {
    int i;
    for (i = 0; i < s->nusers; i++)
        if (strcmp(s->users[i].name, name) == 0) break;
    if (i == s->nusers) {
        if (i == PS_MAX_USER || strlen(name) >= PS_NAME) return;
        memset(&s->users[i], 0, sizeof s->users[i]);
        strcpy(s->users[i].name, name);
        s->users[i].max = -1.0 / 0.0, s->users[i].min = 1.0 / 0.0;
        s->nusers++;
    }
    s->users[i].count += 1;
    if (v > s->users[i].max) s->users[i].max = v;
    if (v < s->users[i].min) s->users[i].min = v;
    s->users[i].sum += v;
    s->users[i].sumsq += v * v;
}

/* Writes `DIR/profile.RANK.0.THREAD` in TAU's profile format (flat timers, user events). */
static inline int ps_write_tau(ps_stream *s, const char *dir) {
    char path[4096];
    FILE *f;
    int i;
    snprintf(path, sizeof path, "%s/profile.%d.0.%d", dir, s->rank, s->thread);
    if (!(f = fopen(path, "w"))) return -1;
    fprintf(f, "%d templated_functions_MULTI_TIME\n", s->ntimers);
    fprintf(f, "# Name Calls Subrs Excl Incl ProfileCalls # <metadata><attribute><name>Metric Name</name>"
               "<value>TIME</value></attribute></metadata>\n");
    for (i = 0; i < s->ntimers; i++) {
        ps_timer *t = &s->timers[i];
        fprintf(f, "\"%s\" %.17g %.17g %.17g %.17g 0 GROUP=\"%s\"\n", t->name, t->calls, t->subcalls, t->excl_us,
                t->incl_us, t->group);
    }
    fprintf(f, "0 aggregates\n%d userevents\n# eventname numevents max min mean sumsqr\n", s->nusers);
    for (i = 0; i < s->nusers; i++) {
        ps_user *u = &s->users[i];
        fprintf(f, "\"%s\" %.17g %.17g %.17g %.17g %.17g\n", u->name, u->count, u->max, u->min, u->sum / u->count,
                u->sumsq);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static inline int64_t ps_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int ps_flush(ps_stream *s) {
    size_t off = 0;
    if (s->fd < 0) return -1;
    while (off < s->len) {
        ssize_t n = send(s->fd, s->buf + off, s->len - off, MSG_NOSIGNAL);
        if (n <= 0) {
            close(s->fd);
            s->fd = -1;
            return -1;
        }
        off += (size_t)n;
    }
    s->len = 0;
    return 0;
}

/* Appends raw bytes, flushing when the buffer is full. */
static inline int ps_put(ps_stream *s, const char *p, size_t n) {
    if (s->fd < 0) return -1;
    while (n > 0) {
        size_t room = PS_BUFFER - s->len, k = n < room ? n : room;
        memcpy(s->buf + s->len, p, k);
        s->len += k, p += k, n -= k;
        if (s->len == PS_BUFFER && ps_flush(s) != 0) return -1;
    }
    return 0;
}

/* Appends `v` as a JSON string (quotes, backslashes and control characters escaped). */
static inline int ps_put_string(ps_stream *s, const char *v) {
    char esc[8];
    ps_put(s, "\"", 1);
    for (; *v; v++) {
        unsigned char c = (unsigned char)*v;
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            ps_put(s, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            ps_put(s, esc, 6);
        } else {
            ps_put(s, (const char *)&c, 1);
        }
    }
    return ps_put(s, "\"", 1);
}

/* Appends `fmt` formatted with one or two integers. */
static inline int ps_put2(ps_stream *s, const char *fmt, long long a, long long b) {
    char tmp[96];
    int n = snprintf(tmp, sizeof tmp, fmt, a, b);
    return ps_put(s, tmp, (size_t)n);
}

static inline int ps_put1(ps_stream *s, const char *fmt, long long a) {
    char tmp[96];
    int n = snprintf(tmp, sizeof tmp, fmt, a);
    return ps_put(s, tmp, (size_t)n);
}

static inline int ps_connect(const char *addr) {
    int fd = -1;
    if (strncmp(addr, "tcp://", 6) == 0) {
        char host[256];
        const char *hp = addr + 6, *colon = strrchr(hp, ':');
        struct addrinfo hints, *res = NULL, *ai;
        size_t hl;
        if (!colon || (hl = (size_t)(colon - hp)) >= sizeof host) return -1;
        if (hp[0] == '[' && hl >= 2) hp++, hl -= 2; /* [::1]:port */
        memcpy(host, hp, hl);
        host[hl] = 0;
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(host, colon + 1, &hints, &res) != 0) return -1;
        for (ai = res; ai; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
            if (fd >= 0) close(fd);
            fd = -1;
        }
        freeaddrinfo(res);
        return fd;
    } else {
        struct sockaddr_un un;
        const char *path = strncmp(addr, "unix:", 5) == 0 ? addr + 5 : addr;
        while (strncmp(path, "//", 2) == 0) path += 2;
        if (strlen(path) >= sizeof un.sun_path) return -1;
        memset(&un, 0, sizeof un);
        un.sun_family = AF_UNIX;
        strcpy(un.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof un) != 0) {
            close(fd);
            fd = -1;
        }
        return fd;
    }
}

/* Connects to `addr` (NULL: the environment variable PERFSCAPE_STREAM) and says hello as
 * thread `rank`.0.`thread`; the token is taken from PERFSCAPE_TOKEN when set. */
static inline int ps_open(ps_stream *s, const char *addr, int rank, int thread, const char *program) {
    const char *token = getenv("PERFSCAPE_TOKEN");
    s->len = 0;
    s->rank = rank, s->thread = thread, s->ntimers = s->nusers = s->depth = s->overflow = 0;
    if (!addr) addr = getenv("PERFSCAPE_STREAM");
    s->fd = addr ? ps_connect(addr) : -1;
    if (s->fd < 0) return -1;
    ps_put2(s, "{\"type\":\"hello\",\"protocol\":%lld,\"rank\":%lld", PS_PROTOCOL, rank);
    ps_put1(s, ",\"thread\":%lld", thread);
    if (program) ps_put(s, ",\"program\":", 11), ps_put_string(s, program);
    if (token) ps_put(s, ",\"token\":", 9), ps_put_string(s, token);
    ps_put(s, "}\n", 2);
    return ps_flush(s);
}

static inline int ps_region(ps_stream *s, const char *type, const char *region, const char *group, int64_t t) {
    ps_put(s, "{\"type\":\"", 9);
    ps_put(s, type, strlen(type));
    ps_put(s, "\",\"region\":", 11);
    ps_put_string(s, region);
    if (group) ps_put(s, ",\"group\":", 9), ps_put_string(s, group);
    return ps_put1(s, ",\"t_ns\":%lld}\n", (long long)t);
}

/* The thread entered `region` (TAU group `group`, NULL for TAU_USER). */
static inline int ps_enter(ps_stream *s, const char *region, const char *group) {
    int64_t t = ps_now_ns();
    ps_acc_enter(s, region, group, t);
    return ps_region(s, "enter", region, group, t);
}

/* The thread left `region`, the region it entered last. */
static inline int ps_exit(ps_stream *s, const char *region) {
    int64_t t = ps_now_ns();
    ps_acc_exit(s, t);
    return ps_region(s, "exit", region, NULL, t);
}

/* A value of the counter `name` (a TAU user event). */
static inline int ps_counter(ps_stream *s, const char *name, double value) {
    char tmp[64];
    ps_acc_value(s, name, value);
    ps_put(s, "{\"type\":\"counter\",\"name\":", 25);
    ps_put_string(s, name);
    snprintf(tmp, sizeof tmp, ",\"value\":%.17g", value);
    ps_put(s, tmp, strlen(tmp));
    return ps_put1(s, ",\"t_ns\":%lld}\n", (long long)ps_now_ns());
}

/* A message of `bytes` sent to rank `to`. */
static inline int ps_send(ps_stream *s, int to, unsigned long long bytes) {
    char name[64];
    snprintf(name, sizeof name, "Message size sent to node %d", to);
    ps_acc_value(s, name, (double)bytes);
    ps_acc_value(s, "Message size sent to all nodes", (double)bytes);
    ps_put2(s, "{\"type\":\"message\",\"to\":%lld,\"bytes\":%lld", to, (long long)bytes);
    return ps_put1(s, ",\"t_ns\":%lld}\n", (long long)ps_now_ns());
}

/* A message of `bytes` received from rank `from`. */
static inline int ps_recv(ps_stream *s, int from, unsigned long long bytes) {
    ps_acc_value(s, "Message size received from all nodes", (double)bytes);
    ps_put2(s, "{\"type\":\"message\",\"from\":%lld,\"bytes\":%lld", from, (long long)bytes);
    return ps_put1(s, ",\"t_ns\":%lld}\n", (long long)ps_now_ns());
}

/* A profile sample named `name` (TAU's snapshot: the k-th sample of a name on every thread
 * goes together); flushes. */
static inline int ps_sample(ps_stream *s, const char *name) {
    ps_put(s, "{\"type\":\"sample\",\"name\":", 24);
    ps_put_string(s, name);
    ps_put1(s, ",\"t_ns\":%lld}\n", (long long)ps_now_ns());
    return ps_flush(s);
}

/* The thread ends (open regions close now, its final sample is taken); flushes and closes. */
static inline int ps_end(ps_stream *s) {
    int r;
    const char *dir = getenv("PERFSCAPE_TAU_DIR");
    int64_t t = ps_now_ns();
    while (s->depth > 0) ps_acc_exit(s, t);
    if (dir && ps_write_tau(s, dir) != 0) fprintf(stderr, "perfscape_stream: cannot write a profile into %s\n", dir);
    ps_put1(s, "{\"type\":\"end\",\"t_ns\":%lld}\n", (long long)t);
    r = ps_flush(s);
    if (s->fd >= 0) {
        shutdown(s->fd, SHUT_WR);
        /* Wait for the server to finish reading (it closes after the end). */
        char sink[256];
        while (recv(s->fd, sink, sizeof sink, 0) > 0) {
        }
        close(s->fd);
        s->fd = -1;
    }
    return r;
}

#endif /* PERFSCAPE_STREAM_H */
