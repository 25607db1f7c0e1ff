/* bench/lib/loadgen.c: lock cycles per second one redis-server sustains (bench/server_load).
 *
 *   loadgen PORT CONNECTIONS SECONDS distinct|contended < TEMPLATES
 *
 * TEMPLATES: two lines, the acquisition and the release, each a command's arguments
 * separated by tabs, in which these are replaced per request:
 *   @N  the lock's name (distinct: NAME-<connection>; contended: NAME)
 *   @O  the connection's owner token       @Q  a new op id (16 hex digits)
 * Each connection runs cycles one request at a time: the acquisition; when it is
 * answered "acquired" (rlock: an array whose first element is 1 or 2; Redisson: nil)
 * the release, then the next acquisition; when it is answered "busy" (anything else)
 * the acquisition again at once. Prints "cycles N attempts N errors N seconds S".
 * An error reply is printed once and counted; the run goes on.
 *
 * Plain C, no library: sockets, poll, and just enough RESP to skip a reply.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 64
#define MAX_CONNS 1024

struct template {
  int argc;
  char* argv[MAX_ARGS];
};

struct conn {
  int fd;
  int releasing;          /* 1: the release is in flight */
  char name[256], owner[64];
  char in[1 << 16];
  size_t have;
};

static unsigned long long g_seq = 1;
static char g_base[200];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void parse_template(char* line, struct template* t) {
  t->argc = 0;
  for (char* tok = strtok(line, "\t\n"); tok && t->argc < MAX_ARGS; tok = strtok(NULL, "\t\n")) {
    t->argv[t->argc++] = strdup(tok);
  }
}

/* Appends `s` with @N, @O, @Q replaced to out (size cap); returns the new length. */
static size_t expand(const char* s, const struct conn* c, char* out, size_t cap) {
  size_t n = 0;
  for (; *s && n + 64 < cap; ++s) {
    if (s[0] == '@' && (s[1] == 'N' || s[1] == 'O' || s[1] == 'Q')) {
      if (s[1] == 'N') {
        n += (size_t)snprintf(out + n, cap - n, "%s", c->name);
      } else if (s[1] == 'O') {
        n += (size_t)snprintf(out + n, cap - n, "%s", c->owner);
      } else {
        n += (size_t)snprintf(out + n, cap - n, "%016llx", g_seq++ * 0x9e3779b97f4a7c15ULL);
      }
      ++s;
    } else {
      out[n++] = *s;
    }
  }
  out[n] = 0;
  return n;
}

static void send_cmd(struct conn* c, const struct template* t) {
  static char buf[1 << 17];
  char arg[1 << 14];
  size_t n = (size_t)snprintf(buf, sizeof buf, "*%d\r\n", t->argc);
  for (int i = 0; i < t->argc; ++i) {
    size_t len = expand(t->argv[i], c, arg, sizeof arg);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "$%zu\r\n", len);
    memcpy(buf + n, arg, len);
    n += len;
    memcpy(buf + n, "\r\n", 2);
    n += 2;
  }
  for (size_t off = 0; off < n;) {
    ssize_t w = write(c->fd, buf + off, n - off);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        continue;
      }
      perror("write");
      exit(1);
    }
    off += (size_t)w;
  }
}

/* The length of one whole RESP value at p (of n bytes), 0 when incomplete. */
static size_t resp_len(const char* p, size_t n) {
  const char* end = memchr(p, '\n', n);
  if (!end) {
    return 0;
  }
  size_t head = (size_t)(end - p) + 1;
  long v = strtol(p + 1, NULL, 10);
  switch (p[0]) {
  case '+':
  case '-':
  case ':':
    return head;
  case '$':
    if (v < 0) {
      return head;
    }
    return head + (size_t)v + 2 <= n ? head + (size_t)v + 2 : 0;
  case '*': {
    size_t at = head;
    for (long i = 0; i < v; ++i) {
      size_t l = resp_len(p + at, n - at);
      if (!l) {
        return 0;
      }
      at += l;
    }
    return at;
  }
  default:
    fprintf(stderr, "loadgen: bad reply byte %c\n", p[0]);
    exit(1);
  }
}

/* Whether an acquisition's reply says "acquired". */
static int acquired(const char* p) {
  if (p[0] == '$' || (p[0] == '*' && p[1] == '-')) {
    return 1; /* nil: Redisson's "acquired" */
  }
  if (p[0] == '*') {
    const char* first = strchr(p, '\n') + 1;
    return first[0] == ':' && (first[1] == '1' || first[1] == '2') && first[2] == '\r';
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: loadgen PORT CONNECTIONS SECONDS distinct|contended < TEMPLATES\n");
    return 2;
  }
  int port = atoi(argv[1]), nconn = atoi(argv[2]);
  double seconds = atof(argv[3]);
  int distinct = strcmp(argv[4], "distinct") == 0;
  if (nconn < 1 || nconn > MAX_CONNS) {
    return 2;
  }
  static char line[1 << 16];
  struct template acq, rel;
  if (!fgets(line, sizeof line, stdin)) {
    return 2;
  }
  parse_template(line, &acq);
  if (!fgets(line, sizeof line, stdin)) {
    return 2;
  }
  parse_template(line, &rel);
  snprintf(g_base, sizeof g_base, "load");
  static struct conn conns[MAX_CONNS];
  static struct pollfd fds[MAX_CONNS];
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  for (int i = 0; i < nconn; ++i) {
    struct conn* c = &conns[i];
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr*)&addr, sizeof addr) != 0) {
      perror("connect");
      return 1;
    }
    snprintf(c->name, sizeof c->name, distinct ? "%s-%d" : "%s", g_base, i);
    snprintf(c->owner, sizeof c->owner, "0badc0de-0000-4000-8000-%012d:%d", i, i + 1);
    fds[i].fd = c->fd;
    fds[i].events = POLLIN;
  }
  unsigned long long cycles = 0, attempts = 0, errors = 0;
  double start = now_s(), end = start + seconds;
  for (int i = 0; i < nconn; ++i) {
    send_cmd(&conns[i], &acq);
    ++attempts;
  }
  int printed = 0;
  while (now_s() < end) {
    if (poll(fds, (nfds_t)nconn, 100) <= 0) {
      continue;
    }
    for (int i = 0; i < nconn; ++i) {
      if (!(fds[i].revents & POLLIN)) {
        continue;
      }
      struct conn* c = &conns[i];
      ssize_t r = read(c->fd, c->in + c->have, sizeof c->in - c->have);
      if (r <= 0) {
        fprintf(stderr, "loadgen: connection %d closed\n", i);
        return 1;
      }
      c->have += (size_t)r;
      size_t len;
      while (c->have && (len = resp_len(c->in, c->have)) > 0) {
        if (c->in[0] == '-') {
          ++errors;
          if (!printed++) {
            fprintf(stderr, "loadgen: %.*s", (int)len, c->in);
          }
        }
        int ok = !c->releasing && acquired(c->in);
        memmove(c->in, c->in + len, c->have - len);
        c->have -= len;
        if (c->releasing) {
          ++cycles;
          c->releasing = 0;
          send_cmd(c, &acq);
          ++attempts;
        } else if (ok) {
          c->releasing = 1;
          send_cmd(c, &rel);
        } else {
          send_cmd(c, &acq);
          ++attempts;
        }
      }
    }
  }
  double took = now_s() - start;
  printf("cycles %llu attempts %llu errors %llu seconds %.3f\n", cycles, attempts, errors, took);
  return 0;
}
