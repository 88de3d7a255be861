/*
 * Per-client I/O.
 *
 * Buffering follows the shape of the traffic. Nearly every read holds whole requests, so reads
 * go into one shared 64 KiB buffer and requests are parsed (and run) straight from it; only a
 * request cut by the end of a read is copied into the client's own buffer, which then takes
 * the following reads until the request is complete. Replies of the whole batch are appended
 * to one shared output buffer and written with a single write(2) right after the batch; only
 * what the socket does not accept is copied to the client. An idle client owns no buffers at
 * all, which is what makes 1,000 connections cheap and keeps the hot buffers in cache.
 *
 * One read of at most 64 KiB per readiness event (level-triggered epoll, see server.c) is the
 * fairness bound: a client pipelining 10,000 requests gets the same turn as everyone else.
 */
#include "connection.h"

#include "commands.h"
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* One read per turn: up to 64 KiB into the shared buffer (a pipelined batch of 16 requests
 * with 1 KiB values, ~17 KiB, arrives in one read), at least 16 KiB into a client's own. */
#define READ_CHUNK (64 * 1024)
#define READ_MIN (16 * 1024)
/* Own buffers bigger than this are given back once empty. */
#define KEEP_BUFFER (64 * 1024)

static int epfd;
static char read_buf[READ_CHUNK];
static struct outbuf batch_out;
static struct client *clients;
static long long next_client_id = 1;

void connection_init(int epoll_fd) {
    epfd = epoll_fd;
}

struct client *connection_clients(void) {
    return clients;
}

const char *connection_peer(const struct client *c) {
    static char peer[32]; /* at most "255.255.255.255:65535" */
    char addr[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &c->peer_addr, addr, sizeof addr);
    snprintf(peer, sizeof peer, "%s:%u", addr, c->peer_port);
    return peer;
}

struct client *connection_new(int fd, const struct sockaddr_in *peer) {
    struct client *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return NULL;
    }
    c->fd = fd;
    c->id = next_client_id++;
    c->db = &databases[0];
    c->out = &batch_out;
    c->resp = 2;
    c->peer_addr = peer->sin_addr;
    c->peer_port = ntohs(peer->sin_port);
    c->created_ms = monotonic_ms();
    parser_init(&c->parser);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        free(c);
        return NULL;
    }
    c->next = clients;
    if (clients)
        clients->prev = c;
    clients = c;
    server_stats.connected_clients++;
    server_stats.total_connections++;
    return c;
}

void connection_close(struct client *c) {
    close(c->fd); /* also leaves the epoll set */
    if (c->prev)
        c->prev->next = c->next;
    else
        clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    multi_free(c);
    parser_free(&c->parser);
    free(c->qbuf);
    free(c->pending);
    free(c->name);
    free(c);
    server_stats.connected_clients--;
}

void connection_close_all(void) {
    while (clients)
        connection_close(clients);
}

bool client_output_over_limit(const struct client *c) {
    return c->pending_len + c->out->len > OUTPUT_LIMIT;
}

static void set_write_armed(struct client *c, bool armed) {
    if (armed == !!(c->flags & CLIENT_WRITE_ARMED))
        return;
    struct epoll_event ev = {.events = EPOLLIN | (armed ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->flags ^= CLIENT_WRITE_ARMED;
}

/* Keeps bytes the socket did not take, after whatever is already waiting. */
static bool stash_output(struct client *c, const char *p, size_t len) {
    if (c->pending_off > 0 && c->pending_len > 0 && c->pending_off > c->pending_cap / 2) {
        memmove(c->pending, c->pending + c->pending_off, c->pending_len);
        c->pending_off = 0;
    } else if (c->pending_len == 0) {
        c->pending_off = 0;
    }
    size_t end = c->pending_off + c->pending_len;
    if (c->pending_cap - end < len) {
        size_t cap = c->pending_cap ? c->pending_cap : 16 * 1024;
        while (cap - end < len)
            cap *= 2;
        char *bigger = realloc(c->pending, cap);
        if (!bigger)
            return false;
        c->pending = bigger;
        c->pending_cap = cap;
    }
    memcpy(c->pending + end, p, len);
    c->pending_len += len;
    return true;
}

/* Writes what is pending; false if the peer is gone. */
static bool write_pending(struct client *c) {
    while (c->pending_len > 0) {
        ssize_t n = write(c->fd, c->pending + c->pending_off, c->pending_len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN;
        }
        c->pending_off += (size_t)n;
        c->pending_len -= (size_t)n;
    }
    /* Everything went: the buffer goes too if it grew big. */
    c->pending_off = 0;
    if (c->pending_cap > KEEP_BUFFER) {
        free(c->pending);
        c->pending = NULL;
        c->pending_cap = 0;
    }
    return true;
}

/* Sends the batch's replies: one write(2); the rest waits for EPOLLOUT. Returns false if the
 * client was closed. */
static bool flush_batch(struct client *c) {
    struct outbuf *o = &batch_out;
    bool ok = true;
    if (c->flags & CLIENT_KILL) {
        ok = false;
    } else if (o->len > 0 && c->pending_len > 0) {
        /* Earlier replies still wait for the socket: queue behind them. */
        ok = stash_output(c, o->buf, o->len);
    } else if (o->len > 0) {
        size_t sent = 0;
        for (;;) {
            ssize_t n = write(c->fd, o->buf, o->len);
            if (n >= 0) {
                sent = (size_t)n;
            } else if (errno == EINTR) {
                continue;
            } else if (errno != EAGAIN) {
                ok = false;
            }
            break;
        }
        if (ok && sent < o->len) {
            if (c->pending == NULL && o->len - sent > KEEP_BUFFER) {
                /* A big remainder: hand the whole buffer over instead of copying it. */
                c->pending = o->buf;
                c->pending_cap = o->cap;
                c->pending_off = sent;
                c->pending_len = o->len - sent;
                o->buf = NULL;
                o->cap = 0;
            } else {
                ok = stash_output(c, o->buf + sent, o->len - sent);
            }
        }
    }
    o->len = 0;
    if (o->cap > 4 * KEEP_BUFFER) {
        /* One huge reply does not pin a huge buffer forever. */
        free(o->buf);
        o->buf = NULL;
        o->cap = 0;
    }
    if (ok && c->pending_len > OUTPUT_LIMIT)
        ok = false;
    if (!ok || ((c->flags & CLIENT_CLOSE_AFTER_REPLY) && c->pending_len == 0)) {
        connection_close(c);
        return false;
    }
    set_write_armed(c, c->pending_len > 0);
    return true;
}

/* Runs every complete request in buf[0..len); returns the bytes consumed. A partial request
 * at the end stays for the next read (the parser remembers how far it got). */
static size_t process_input(struct client *c, char *buf, size_t len) {
    size_t pos = 0;
    c->out->resp = c->resp;
    while (pos < len && !(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_KILL))) {
        enum parse_status st = parse_request(&c->parser, buf + pos, len - pos);
        if (st == PARSE_MORE)
            break;
        if (st == PARSE_ERROR) {
            /* As redis: the error, then the connection closes; later bytes are ignored. */
            reply_errorf(c->out, "%s", c->parser.error);
            c->flags |= CLIENT_CLOSE_AFTER_REPLY;
            return len;
        }
        pos += c->parser.used;
        if (st == PARSE_REQUEST) {
            command_execute(c, c->parser.argc, c->parser.argv);
            server_stats.total_commands++;
            if (client_output_over_limit(c))
                c->flags |= CLIENT_KILL;
        }
    }
    parser_shrink(&c->parser);
    return pos;
}

/* Makes room for `want` more bytes in the client's own buffer. */
static bool reserve_input(struct client *c, size_t want) {
    if (c->qcap - c->qlen >= want)
        return true;
    size_t cap = c->qcap ? c->qcap : READ_MIN;
    while (cap - c->qlen < want)
        cap *= 2;
    char *bigger = realloc(c->qbuf, cap);
    if (!bigger)
        return false;
    c->qbuf = bigger;
    c->qcap = cap;
    return true;
}

bool connection_readable(struct client *c) {
    char *buf;
    size_t want = READ_CHUNK;
    if (c->qlen == 0) {
        buf = read_buf;
    } else {
        /* Inside a big bulk the read is sized to it, at most doubling what has arrived: an
         * announced 512 MB costs nothing until the bytes come. Otherwise whatever room the
         * buffer has, at least READ_MIN. */
        size_t need = parser_wants(&c->parser);
        want = READ_MIN;
        if (need > c->qlen + READ_MIN) {
            size_t rest = need - c->qlen;
            size_t step = c->qlen > READ_MIN ? c->qlen : READ_MIN;
            want = rest < step ? rest : step;
        }
        if (!reserve_input(c, want)) {
            connection_close(c);
            return false;
        }
        if (need <= c->qlen + READ_MIN)
            want = c->qcap - c->qlen;
        buf = c->qbuf + c->qlen;
    }
    ssize_t n = read(c->fd, buf, want);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return true;
        connection_close(c);
        return false;
    }
    size_t consumed;
    if (buf == read_buf) {
        consumed = process_input(c, read_buf, (size_t)n);
        size_t rest = (size_t)n - consumed;
        if (rest > 0 && !(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_KILL))) {
            if (!reserve_input(c, rest)) {
                connection_close(c);
                return false;
            }
            memcpy(c->qbuf, read_buf + consumed, rest);
            c->qlen = rest;
        }
    } else {
        c->qlen += (size_t)n;
        consumed = process_input(c, c->qbuf, c->qlen);
        c->qlen -= consumed;
        if (c->qlen > 0 && consumed > 0)
            memmove(c->qbuf, c->qbuf + consumed, c->qlen);
        if (c->qlen == 0) {
            /* Only partial requests live here: an idle client keeps no buffer. */
            free(c->qbuf);
            c->qbuf = NULL;
            c->qcap = 0;
        }
    }
    return flush_batch(c);
}

bool connection_writable(struct client *c) {
    if (!write_pending(c)) {
        connection_close(c);
        return false;
    }
    if (c->pending_len == 0 && (c->flags & CLIENT_CLOSE_AFTER_REPLY)) {
        connection_close(c);
        return false;
    }
    set_write_armed(c, c->pending_len > 0);
    return true;
}
