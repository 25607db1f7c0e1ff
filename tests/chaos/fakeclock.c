/* fakeclock.so: an LD_PRELOAD shim that shifts the wall clock of one process
 * (CLOCK_REALTIME and friends, gettimeofday, time) by an offset read from a
 * file, and leaves every other clock (CLOCK_MONOTONIC, CLOCK_BOOTTIME) alone.
 *
 * Why not libfaketime: Debian's redis-server is linked against the system
 * jemalloc, which reads the clock while libfaketime initialises itself, and the
 * server hangs at start ("Unexpected recursive calls to clock_gettime()",
 * libfaketime issue #130). This shim never allocates, never calls dlsym, and
 * reads the clocks with the raw system call.
 *
 * FAKECLOCK_FILE names a file whose first bytes are the offset in seconds,
 * e.g. "+0", "+3600", "-3600.5". It is mapped once and parsed on each call,
 * so rewriting it in place (same inode, e.g. `dd conv=notrunc`) jumps the
 * clock of the running process at once.
 *
 * Build: cc -shared -fPIC -O2 -o fakeclock.so fakeclock.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAP_LEN 64

static const volatile char *offset_map;
static int offset_state; /* 0: not tried, 1: mapped, -1: no file */

static void map_offset(void) {
  if (offset_state != 0) {
    return;
  }
  const char *path = getenv("FAKECLOCK_FILE");
  int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) {
    offset_state = -1;
    return;
  }
  void *p = mmap(NULL, MAP_LEN, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    offset_state = -1;
    return;
  }
  offset_map = (const volatile char *)p;
  offset_state = 1;
}

/* The offset in nanoseconds: [+-]SECONDS[.FRACTION], anything else is 0. */
static long long offset_ns(void) {
  map_offset();
  if (offset_state != 1) {
    return 0;
  }
  char buf[MAP_LEN];
  for (int i = 0; i < MAP_LEN; ++i) {
    buf[i] = offset_map[i];
  }
  int i = 0;
  int sign = 1;
  if (buf[i] == '+' || buf[i] == '-') {
    sign = buf[i] == '-' ? -1 : 1;
    ++i;
  }
  long long sec = 0;
  long long frac = 0;
  long long scale = 1000000000LL;
  while (i < MAP_LEN && buf[i] >= '0' && buf[i] <= '9') {
    sec = sec * 10 + (buf[i++] - '0');
  }
  if (i < MAP_LEN && buf[i] == '.') {
    ++i;
    while (i < MAP_LEN && buf[i] >= '0' && buf[i] <= '9' && scale > 1) {
      scale /= 10;
      frac += (buf[i++] - '0') * scale;
    }
  }
  return sign * (sec * 1000000000LL + frac);
}

static int is_wall(clockid_t clk) {
  return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_TAI;
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
  long rc = syscall(SYS_clock_gettime, clk, ts);
  if (rc != 0 || !is_wall(clk)) {
    return (int)rc;
  }
  long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset_ns();
  ts->tv_sec = (time_t)(ns / 1000000000LL);
  ts->tv_nsec = (long)(ns % 1000000000LL);
  return 0;
}

int __clock_gettime(clockid_t clk, struct timespec *ts) {
  return clock_gettime(clk, ts);
}

int gettimeofday(struct timeval *tv, void *tz) {
  (void)tz;
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
    return -1;
  }
  struct timeval *volatile out = tv; /* glibc declares tv nonnull; callers may still pass NULL */
  if (out) {
    out->tv_sec = ts.tv_sec;
    out->tv_usec = ts.tv_nsec / 1000;
  }
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out) {
    *out = ts.tv_sec;
  }
  return ts.tv_sec;
}
