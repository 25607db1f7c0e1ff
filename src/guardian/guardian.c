/* rlock's guardian: the processes between `rlock run` and CMD.
 *
 * `rlock run` is the process the caller started: it takes the lock, renews
 * it, passes signals on to CMD's tree and releases. What it cannot do is
 * outlive a SIGKILL. So CMD is not its child but this program's: the guardian
 * (rlock's child, spawned in a process group of its own, so that a kill of
 * the caller's whole group never ends it with rlock) forks its keeper, whose
 * child CMD is. Both are child subreapers (every descendant of CMD, double
 * forks and setsid included, is reparented to the keeper, never to init) with
 * a parent-death signal. When rlock dies, the guardian notices at once and
 * executes rlock again (its program file, through an fd kept open, so that a
 * package upgrade cannot swap it), whose run::resume_orphaned kills CMD's
 * whole tree (run/tree.cpp, the one place that does) and releases the lock;
 * when rlock and the guardian die together, the keeper does. So the promise
 * "rlock SIGKILLed -> CMD's tree dies with it" holds with one copy of rlock in
 * memory, however the kill comes (docs/run.md has the table).
 *
 * Its common path, while rlock lives:
 *   - wait: rlock starts it before it asks for the lock, and sends "go" (with
 *     CMD's environment, whether CMD gets the terminal, whether the lock is
 *     held) once it has it; the pipe closing without a go (busy, skipped, an
 *     error), or rlock's death before it, ends the guardian with nothing
 *     started and nothing released;
 *   - start CMD: fork, its own process group, the terminal's foreground when
 *     asked, an empty signal mask, exec (a script without "#!" runs with
 *     /bin/sh, as execvp does); rlock learns the exec's errno when it fails;
 *   - report to rlock, over a pipe, CMD's pid once it runs, a stop (Ctrl-Z)
 *     and its end (the wait status);
 *   - reap what CMD left behind, and exit 0 once nothing is left: that exit is
 *     how rlock learns that CMD's tree is gone.
 * It never acts on a signal rlock's caller sends (rlock passes those on): it
 * starts with every signal blocked and reads only SIGCHLD and the
 * parent-death signal, and it trusts getppid(), not the signal.
 *
 * Built two ways from this one file:
 *   - RLOCK_GUARDIAN_STANDALONE: freestanding, x86-64 or aarch64, raw system
 *     calls, no C library, no relocations (the build checks); embedded in
 *     rlock and executed from a memfd (run/spawn.cpp): a 16 KiB process;
 *   - hosted, inside rlock (system calls through libc's syscall()): where the
 *     small image cannot be executed (vm.memfd_noexec=2, another machine),
 *     rlock's own program file is executed as the guardian and main() calls
 *     rlock_guardian_main. Same code, same behaviour, a bigger process.
 *
 * Its input, from rlock (run::Guarded::prepare, go):
 *   argv: "rlock-guardian" PATH ARGV0 ARGV1 ...: CMD, PATH resolved by rlock;
 *   envp: rlock's environment when it started this, plus RLOCK_GUARDIAN, its
 *     state (guardian.h, the one statement of the protocol: its fields and
 *     their order, the go, the reports, the exit codes). CMD gets the
 *     environment of the go, never this variable. When rlock died, its role
 *     letter becomes 'O' for the rlock executed then. */

/* Every number below comes from the kernel's own headers (system calls,
 * signals, flags, ioctls, struct pollfd), so one source serves each
 * architecture: only the generic system calls are used (ppoll, pipe2,
 * execveat...: aarch64 has no poll, pipe, dup2 or open). The same headers in
 * both builds; the hosted one adds the C library's syscall() and errno. Two
 * facts are the kernel's ABI on every Linux architecture, not per
 * architecture: the wait status layout (a stopped child's low byte is 0x7f)
 * and the 64-bit signal set rt_sigprocmask and signalfd4 take (128 bits only
 * on MIPS, which rlock is not built for). */
#include <asm/ioctls.h>
#include <asm/signal.h>
#include <asm/unistd.h>
#include <linux/errno.h>
#include <linux/fcntl.h>
#include <linux/mman.h>
#include <linux/poll.h>
#include <linux/prctl.h>
#include <linux/signalfd.h>
#include <linux/wait.h>
#include <stddef.h>
#include <stdint.h>

#include "guardian.h"

typedef uint64_t kernel_sigset; /* the kernel's sigset_t, as rt_sigprocmask and signalfd4 take it */

#ifdef RLOCK_GUARDIAN_STANDALONE

/* The machine's system call instruction: the one architecture-specific part. */
#if defined(__x86_64__)
static long sys6(long nr, long a, long b, long c, long d, long e, long f) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
static long sys6(long nr, long a, long b, long c, long d, long e, long f) {
  register long x8 __asm__("x8") = nr;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = d;
  register long x4 __asm__("x4") = e;
  register long x5 __asm__("x5") = f;
  __asm__ volatile("svc #0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory");
  return x0;
}
#else
#error "the small guardian is written for x86-64 and aarch64; CMake builds it only there"
#endif

/* The compiler may call these for struct copies and zeroing. */
void* memset(void* to, int byte, size_t n) {
  unsigned char* p = (unsigned char*)to;
  while (n--) {
    *p++ = (unsigned char)byte;
  }
  return to;
}

void* memcpy(void* to, const void* from, size_t n) {
  unsigned char* p = (unsigned char*)to;
  const unsigned char* q = (const unsigned char*)from;
  while (n--) {
    *p++ = *q++;
  }
  return to;
}

#else

#include <errno.h>
#include <unistd.h>

static long sys6(long nr, long a, long b, long c, long d, long e, long f) {
  long r = syscall(nr, a, b, c, d, e, f);
  return r == -1 ? -errno : r;
}

#endif

static long sys3(long nr, long a, long b, long c) { return sys6(nr, a, b, c, 0, 0, 0); }

static __attribute__((noreturn)) void exit_with(int status) {
  for (;;) {
    sys3(__NR_exit_group, status, 0, 0);
  }
}

static size_t length(const char* s) {
  size_t n = 0;
  while (s[n]) {
    ++n;
  }
  return n;
}

static void say(const char* text) { sys3(__NR_write, 2, (long)text, (long)length(text)); }

/* The entry NAME=... in envp, or 0. */
static char** env_entry(char** envp, const char* name) {
  size_t n = length(name);
  for (; *envp; ++envp) {
    const char* e = *envp;
    size_t i = 0;
    while (i < n && e[i] == name[i]) {
      ++i;
    }
    if (i == n && e[n] == '=') {
      return envp;
    }
  }
  return 0;
}

struct state {
  char** entry; /* RLOCK_GUARDIAN's entry in envp */
  long parent, kill, exe, spec, report, go, death_signal;
  long tty;      /* from the go message */
  long guardian; /* in the keeper: the guardian's pid (its parent); 0 in the guardian */
  volatile int32_t* went; /* what the keeper got (guardian_went), shared by the two */
};

/* The keeper's supervisors are alive: its parent is the guardian, or rlock
 * (a child subreaper: the keeper's parent once the guardian is gone). The
 * guardian's: its parent is rlock. */
static int supervised(const struct state* s) {
  long parent = sys3(__NR_getppid, 0, 0, 0);
  return parent == s->parent || (s->guardian != 0 && parent == s->guardian);
}

/* Reads exactly n bytes; 0 at the end of the pipe or on an error. */
static int read_all(long fd, void* to, long n) {
  char* p = (char*)to;
  while (n > 0) {
    long r = sys3(__NR_read, fd, (long)p, n);
    if (r == -EINTR) {
      continue;
    }
    if (r <= 0) {
      return 0;
    }
    p += r;
    n -= r;
  }
  return 1;
}

static void* allocate(long n) {
  long p = sys6(__NR_mmap, 0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p < 0 && p > -4096 ? 0 : (void*)p;
}

/* rlock's go: the message (guardian.h) and CMD's environment, NUL-separated
 * entries, into *cmd_envp: 1. 0: rlock's cancel (busy, skipped, an error):
 * nothing was started and rlock holds nothing for it. -1: rlock is gone
 * without either (killed while it waited, or with the guardian): nothing was
 * started, and the run may still be queued. */
static int wait_for_go(struct state* s, long signals, char*** cmd_envp) {
  for (;;) {
    struct pollfd fds[2] = {{(int)s->go, POLLIN, 0}, {(int)signals, POLLIN, 0}};
    sys6(__NR_ppoll, (long)fds, 2, 0, 0, sizeof(kernel_sigset), 0); /* no timeout, the mask kept */
    if (fds[1].revents) {
      struct signalfd_siginfo taken[4];
      sys3(__NR_read, signals, (long)taken, sizeof taken);
    }
    if (!supervised(s)) {
      return -1;
    }
    if (fds[0].revents) {
      break;
    }
  }
  int32_t message[2];
  struct guardian_go_message go;
  if (!read_all(s->go, message, sizeof message) || !guardian_go_decode(message, &go)) {
    return -1;
  }
  if (go.cancel) {
    return 0;
  }
  long size = go.env_size;
  char* blob = (char*)allocate(size + 1);
  if (!blob || !read_all(s->go, blob, size)) {
    return -1;
  }
  blob[size] = 0;
  long count = 0;
  for (long i = 0; i < size; ++i) {
    count += blob[i] == 0;
  }
  char** envp = (char**)allocate((count + 1) * (long)sizeof(char*));
  if (!envp) {
    return -1;
  }
  long n = 0;
  for (long at = 0; at < size && n < count; ++n) {
    envp[n] = blob + at;
    at += (long)length(blob + at) + 1;
  }
  envp[n] = 0;
  *cmd_envp = envp;
  s->tty = go.tty;
  *s->went = go.locked ? guardian_went_locked : guardian_went_unlocked;
  if (!go.locked && s->spec >= 0) {
    sys3(__NR_close, s->spec, 0, 0); /* CMD runs without a lock: nothing to release */
    s->spec = -1;
  }
  return 1;
}

/* What rlock reads from REPORT_FD: 8 bytes each (guardian.h). */
static void report(const struct state* s, enum guardian_report kind, int value) {
  struct guardian_event event = {kind, value};
  int32_t message[2];
  guardian_report_encode(&event, message);
  sys3(__NR_write, s->report, (long)message, sizeof message);
}

/* rlock died (and, in the keeper, the guardian too): its own image,
 * executed again in this process, stops CMD's tree and releases the lock
 * (run::resume_orphaned); before any go, it gives up the run's place in the
 * queue instead (GO_FD -1 in its state). */
static __attribute__((noreturn)) void hand_over(struct state* s, char** argv, char** envp) {
  static const char empty[1] = {0};
  int32_t went = *s->went;
  if (went == guardian_went_unlocked && s->spec >= 0) {
    sys3(__NR_close, s->spec, 0, 0); /* CMD ran without the lock: nothing to release */
    s->spec = -1;
  }
  struct guardian_state handed = {guardian_role_orphaned, {0}};
  handed.field[guardian_parent] = s->parent;
  handed.field[guardian_kill] = s->kill;
  handed.field[guardian_exe] = s->exe;
  handed.field[guardian_spec] = s->spec;
  handed.field[guardian_report] = s->report;
  handed.field[guardian_go] = went == guardian_went_none ? -1 : s->go;
  handed.field[guardian_death_signal] = s->death_signal;
  handed.field[guardian_image] = -1;
  static char value[sizeof GUARDIAN_ENV + 256] = GUARDIAN_ENV "=";
  if (guardian_state_encode(&handed, value + sizeof GUARDIAN_ENV, sizeof value - sizeof GUARDIAN_ENV) == 0) {
    exit_with(guardian_exit_software); /* cannot happen: every number fits */
  }
  *s->entry = value;
  if (s->spec >= 0) {
    sys3(__NR_fcntl, s->spec, F_SETFD, 0); /* it must reach the next image */
  }
  /* Open across the exec too (the next image closes it): a program file
   * started through binfmt_misc (rlock for another machine, run by
   * qemu-user) must stay reachable after the exec, or execveat fails (ENOENT). */
  sys3(__NR_fcntl, s->exe, F_SETFD, 0);
  long r = sys6(__NR_execveat, s->exe, (long)empty, (long)argv, (long)envp, AT_EMPTY_PATH, 0);
  if (r == -ENOSYS) {
    /* No execveat (Debian 12's qemu-user 7.2 emulates none): the same file by its
     * path in /proc, which stays valid across the exec (the fd is open). */
    static char path[32] = "/proc/self/fd/";
    char digits[12];
    int count = 0;
    unsigned long fd = (unsigned long)s->exe;
    do {
      digits[count++] = (char)('0' + fd % 10);
      fd /= 10;
    } while (fd > 0);
    size_t at = length(path);
    while (count > 0) {
      path[at++] = digits[--count];
    }
    path[at] = 0;
    sys3(__NR_execve, (long)path, (long)argv, (long)envp);
  }
  /* Nothing else can stop CMD's tree from here: say so loudly. */
  say("rlock: rlock was killed and could not be started again to stop CMD's tree; stop it yourself "
      "(its lock expires by its lease)\n");
  exit_with(guardian_exit_software);
}

/* In the child: becomes CMD, or writes why not to `failed` and exits 127 (guardian_exit_not_found). */
static __attribute__((noreturn)) void become_cmd(const struct state* s, char** argv, char** envp, long failed,
                                                 long keeper) {
  sys3(__NR_setpgid, 0, 0, 0);
  if (s->kill) {
    /* Should the keeper die too (rlock, the guardian and the keeper all
     * killed), CMD itself does not go on: the last net, for CMD alone. */
    sys3(__NR_prctl, PR_SET_PDEATHSIG, SIGKILL, 0);
    if (sys3(__NR_getppid, 0, 0, 0) != keeper) {
      exit_with(guardian_exit_software);
    }
  }
  if (s->tty) {
    /* Every signal is still blocked: SIGTTOU cannot stop this. */
    int self = (int)sys3(__NR_getpid, 0, 0, 0);
    sys3(__NR_ioctl, 0, TIOCSPGRP, (long)&self);
  }
  /* CMD gets rlock's environment, never this program's state. */
  char** entry = env_entry(envp, GUARDIAN_ENV);
  for (; entry && *entry; ++entry) {
    entry[0] = entry[1];
  }
  kernel_sigset none = 0;
  sys6(__NR_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, sizeof none, 0, 0);
  const char* path = argv[1];
  long r = sys3(__NR_execve, (long)path, (long)(argv + 2), (long)envp);
  if (r == -ENOEXEC) {
    /* No "#!": /bin/sh runs it, as execvp does. */
    argv[1] = (char*)"/bin/sh";
    argv[2] = (char*)path;
    r = sys3(__NR_execve, (long)argv[1], (long)(argv + 1), (long)envp);
  }
  int32_t err = (int32_t)-r;
  sys3(__NR_write, failed, (long)&err, sizeof err);
  exit_with(guardian_exit_not_found);
}

/* The keeper: reads the go, starts CMD as its child, reports, and reaps
 * CMD's tree (a child subreaper: double forks and setsid included) until
 * nothing of it is left. Should rlock and the guardian both be gone, it hands
 * over itself. */
static int keep(struct state* s, long signals, char** argv, char** envp) {
  sys3(__NR_prctl, PR_SET_CHILD_SUBREAPER, 1, 0);
  sys3(__NR_prctl, PR_SET_PDEATHSIG, s->death_signal, 0);
  /* (Should the guardian have died before that line, with rlock: rlock's
   * end of the go pipe is closed, and the wait below sees it.) */
  report(s, guardian_keeper, (int)sys3(__NR_getpid, 0, 0, 0));
  /* Started before rlock asks for the lock (its exec then costs nothing on
   * the way from "acquired" to CMD); CMD starts on rlock's go. */
  char** cmd_envp = 0;
  int went = wait_for_go(s, signals, &cmd_envp);
  if (went < 0 && s->spec >= 0) {
    hand_over(s, argv, envp); /* rlock died while it waited: leave the queue */
  }
  if (went <= 0) {
    return 0;
  }
  sys3(__NR_close, s->go, 0, 0);

  int failed[2];
  long cmd = sys3(__NR_pipe2, (long)failed, O_CLOEXEC, 0);
  const long keeper = sys3(__NR_getpid, 0, 0, 0);
  if (cmd == 0) {
    /* fork: clone's argument order differs between architectures, all but the first are 0 */
    cmd = sys6(__NR_clone, SIGCHLD, 0, 0, 0, 0, 0);
  }
  if (cmd == 0) {
    become_cmd(s, argv, cmd_envp, failed[1], keeper);
  }
  if (cmd < 0) {
    report(s, guardian_failed, (int)-cmd);
    return 0;
  }
  sys3(__NR_setpgid, cmd, cmd, 0);
  sys3(__NR_close, failed[1], 0, 0);
  int32_t err = 0;
  long n;
  while ((n = sys3(__NR_read, failed[0], (long)&err, sizeof err)) == -EINTR) {
  }
  sys3(__NR_close, failed[0], 0, 0);
  if (n == sizeof err) {
    sys6(__NR_wait4, cmd, 0, 0, 0, 0, 0);
    report(s, guardian_failed, err);
    return 0;
  }
  report(s, guardian_started, (int)cmd);

  for (;;) {
    int status = 0, end = 0, ended = 0;
    long pid;
    while ((pid = sys6(__NR_wait4, -1, (long)&status, WNOHANG | WUNTRACED, 0, 0, 0)) > 0) {
      if (pid != cmd) {
        continue; /* an orphan of CMD's tree */
      }
      if ((status & 0xff) == 0x7f) {
        report(s, guardian_stopped, status);
      } else {
        ended = 1;
        end = status;
      }
    }
    /* CMD's end, and whether anything of its tree is left: what rlock waits
     * for before it releases. After the last, nothing but exit: rlock may be
     * gone at once, and this must not take that for its death. */
    if (ended) {
      report(s, pid == -ECHILD ? guardian_exited_last : guardian_exited, end);
    }
    if (pid == -ECHILD) {
      return 0; /* nothing of CMD's tree is left */
    }
    if (!supervised(s)) {
      if (!s->kill && s->spec < 0) {
        return 0; /* --on-lost ignore and no lock: nothing to do */
      }
      hand_over(s, argv, envp);
    }
    struct signalfd_siginfo taken[4];
    sys3(__NR_read, signals, (long)taken, sizeof taken);
  }
}

/* The guardian, once the keeper runs: waits for the keeper's end or rlock's
 * death. It is in a process group of its own (rlock spawned it so), so that
 * a signal to the caller's whole group (timeout -s KILL, a CI runner's
 * cancel) cannot end rlock and it together. */
static int guard(struct state* s, long signals, long keeper, char** argv, char** envp) {
  sys3(__NR_close, s->report, 0, 0); /* the keeper's: rlock reads its end when the keeper ends */
  sys3(__NR_close, s->go, 0, 0);
  for (;;) {
    int status = 0;
    long pid = sys6(__NR_wait4, keeper, (long)&status, WNOHANG, 0, 0, 0);
    int keeper_gone = pid == keeper || pid == -ECHILD;
    if (!supervised(s)) {
      /* rlock died. While the keeper lives, it hands over (this exit is its
       * parent-death signal; before any go, it saw rlock's end of the go pipe
       * close): one hand-over, from the process below CMD's tree, so that a
       * kill that ends rlock and this together cannot end it halfway, having
       * killed the keeper first. With the keeper gone too, what it left
       * (orphans reparented here, the lock) is this one's to end. */
      if (keeper_gone && *s->went != guardian_went_none && (s->kill || s->spec >= 0)) {
        hand_over(s, argv, envp);
      }
      return 0;
    }
    if (keeper_gone) {
      if (pid == keeper && (status & 0x7f) != 0 && (status & 0xff) != 0x7f) {
        /* The keeper was killed: so is this, as rlock sees it (CMD's tree,
         * reparented here, goes on to rlock, which stops it). */
        sys3(__NR_kill, sys3(__NR_getpid, 0, 0, 0), SIGKILL, 0);
      }
      return pid == keeper ? (status >> 8) & 0xff : 0;
    }
    struct signalfd_siginfo taken[4];
    sys3(__NR_read, signals, (long)taken, sizeof taken);
  }
}

int rlock_guardian_main(int argc, char** argv, char** envp) {
  char** entry = env_entry(envp, GUARDIAN_ENV);
  char* value = entry ? *entry + sizeof GUARDIAN_ENV : 0; /* after the '=' */
  struct guardian_state decoded;
  if (!value || argc < 3 || !guardian_state_decode(value, &decoded) || decoded.role != guardian_role_guardian) {
    say("rlock: internal error: the guardian was started without its state\n");
    return guardian_exit_software;
  }
  struct state s;
  s.entry = entry;
  s.parent = decoded.field[guardian_parent];
  s.kill = decoded.field[guardian_kill];
  s.exe = decoded.field[guardian_exe];
  s.spec = decoded.field[guardian_spec];
  s.report = decoded.field[guardian_report];
  s.go = decoded.field[guardian_go];
  s.death_signal = decoded.field[guardian_death_signal];
  /* The image this was executed from: open until here only for an emulator
   * that opens it by path after the exec (guardian.h); never CMD's. */
  if (decoded.field[guardian_image] >= 0) {
    sys3(__NR_close, decoded.field[guardian_image], 0, 0);
  }
  s.tty = 0;
  s.guardian = 0;
  sys3(__NR_prctl, PR_SET_NAME, (long)GUARDIAN_NAME, 0);
  sys3(__NR_prctl, PR_SET_CHILD_SUBREAPER, 1, 0);
  sys3(__NR_prctl, PR_SET_PDEATHSIG, s.death_signal, 0);
  /* rlock started it with every signal blocked; they stay so. */
  kernel_sigset all = ~(kernel_sigset)0;
  sys6(__NR_rt_sigprocmask, SIG_BLOCK, (long)&all, 0, sizeof all, 0, 0);
  kernel_sigset wake = ((kernel_sigset)1 << (SIGCHLD - 1)) | ((kernel_sigset)1 << (s.death_signal - 1));
  long signals = sys6(__NR_signalfd4, -1, (long)&wake, sizeof wake, SFD_CLOEXEC, 0, 0);
  /* Not for CMD. */
  sys3(__NR_fcntl, s.exe, F_SETFD, FD_CLOEXEC);
  sys3(__NR_fcntl, s.report, F_SETFD, FD_CLOEXEC);
  sys3(__NR_fcntl, s.go, F_SETFD, FD_CLOEXEC);
  if (s.spec >= 0) {
    sys3(__NR_fcntl, s.spec, F_SETFD, FD_CLOEXEC);
  }
  long shared = sys6(__NR_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (signals < 0 || (shared < 0 && shared > -4096)) {
    return guardian_exit_software;
  }
  s.went = (volatile int32_t*)shared;
  *s.went = guardian_went_none;
  /* Two processes, so that no one kill ends every part of rlock: this one,
   * in a group of its own, and the keeper, CMD's parent. rlock killed: this
   * exits and the keeper hands over; this killed: the keeper goes on,
   * reparented to rlock; both killed: the keeper hands over; the keeper
   * killed: so is this, and rlock stops what is left. */
  const long self = sys3(__NR_getpid, 0, 0, 0);
  long keeper = sys6(__NR_clone, SIGCHLD, 0, 0, 0, 0, 0);
  if (keeper == 0) {
    s.guardian = self;
    return keep(&s, signals, argv, envp);
  }
  if (keeper < 0) {
    return keep(&s, signals, argv, envp); /* one process, as it can */
  }
  return guard(&s, signals, keeper, argv, envp);
}

#ifdef RLOCK_GUARDIAN_STANDALONE

void guardian_start(long* stack);
__attribute__((used, noinline)) void guardian_start(long* stack) {
  int argc = (int)stack[0];
  char** argv = (char**)(stack + 1);
  exit_with(rlock_guardian_main(argc, argv, argv + argc + 1));
}

/* The entry point: the initial stack (argc, argv, envp) to guardian_start,
 * the frame chain ended. */
#if defined(__x86_64__)
__asm__(".text\n"
        ".global _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call guardian_start\n"
        "  hlt\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".global _start\n"
        ".type _start, %function\n"
        "_start:\n"
        "  mov x29, #0\n"
        "  mov x30, #0\n"
        "  mov x0, sp\n"
        "  bl guardian_start\n"
        "  brk #0\n");
#endif

#endif
