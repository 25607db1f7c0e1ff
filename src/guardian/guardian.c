/* rlock's small guardian: the image `rlock run`'s guardian becomes right after
 * it forks the supervisor (run::Guardian::become_small, run/spawn.cpp).
 *
 * The guardian is the process the caller started: its pid is what the shell,
 * cron or CI waits for and signals. Its whole job while CMD runs is to pass
 * the caller's signals on to the supervisor (rlock-run) and to return the
 * supervisor's exit status. In rlock's own image that costs a second copy of
 * everything rlock touched before the fork (1.3-2 MiB of mapped text, the
 * heap, the trust store); this freestanding program, linked without any
 * library and embedded in rlock, maps a few pages.
 *
 * What it does not do itself: when the supervisor was killed, it neither reaps
 * it nor kills CMD's tree here. It executes rlock again (the program file it
 * was started from, kept open as RLOCK_GUARDIAN_OF's fd), whose
 * run::Guardian::resume_after_exec finds its killed child and does what rlock's
 * guardian has always done: kill the tree (run/tree.cpp, the one place that
 * does), say so, exit 128+N. So there is one guardian, with two images: this
 * one for the common path, rlock's own for the rare one.
 *
 * Its input, from rlock (nothing else in its environment is read):
 *   RLOCK_GUARDIAN_OF="SUPERVISOR_PID KILL_FLAG EXE_FD SIGNALS_HEX"
 *     SIGNALS_HEX: the signals to pass on (bit N-1 = signal N), all blocked
 *     and still pending across the exec if they came meanwhile;
 *   RLOCK_GUARDIAN_NAME: the process name (comm) to take back;
 * its argv is the caller's command line, kept so that ps shows the same.
 *
 * No libc: raw system calls, no relocations (checked at build time), so the
 * kernel maps it anywhere (a position-independent executable, ASLR kept) and
 * nothing runs before guardian_main. It reads nothing but its environment
 * and its children's wait status. x86-64 only (the build falls back to
 * rlock's own image elsewhere). */

#include <asm/unistd.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(__x86_64__)
#error "the small guardian is written for x86-64; CMake builds it only there"
#endif

enum {
  k_sigchld = 17,
  k_sigttou = 22,
  k_sig_block = 0,
  k_p_pid = 1,
  k_wexited = 4,
  k_wnohang = 1,
  k_wnowait = 0x01000000,
  k_cld_exited = 1,
  k_sfd_cloexec = 02000000,
  k_at_empty_path = 0x1000,
  k_pr_set_name = 15,
  k_eintr = 4,
};

/* The kernel's siginfo_t as waitid fills it (128 bytes) and its
 * signalfd_siginfo (128 bytes): only the fields read here are named. */
struct wait_info {
  int32_t signo;
  int32_t errno_;
  int32_t code;
  int32_t pad_;
  int32_t pid;
  uint32_t uid;
  int32_t status;
  char rest[128 - 28];
};

struct signal_info {
  uint32_t signo;
  char rest[124];
};

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

static long sys3(long nr, long a, long b, long c) { return sys6(nr, a, b, c, 0, 0, 0); }

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

/* The value of NAME in envp, or 0. */
static const char* env_value(char** envp, const char* name) {
  size_t n = length(name);
  for (; *envp; ++envp) {
    const char* e = *envp;
    size_t i = 0;
    while (i < n && e[i] == name[i]) {
      ++i;
    }
    if (i == n && e[n] == '=') {
      return e + n + 1;
    }
  }
  return 0;
}

/* Reads an unsigned number in `base` at *at, then skips one space. 0 on no digits. */
static int number(const char** at, int base, uint64_t* out) {
  const char* p = *at;
  uint64_t v = 0;
  int digits = 0;
  for (;; ++p, ++digits) {
    int d;
    if (*p >= '0' && *p <= '9') {
      d = *p - '0';
    } else if (base == 16 && *p >= 'a' && *p <= 'f') {
      d = *p - 'a' + 10;
    } else {
      break;
    }
    v = v * (uint64_t)base + (uint64_t)d;
  }
  if (digits == 0 || digits > 20) {
    return 0;
  }
  if (*p == ' ') {
    ++p;
  }
  *at = p;
  *out = v;
  return 1;
}

/* Hands over to rlock's own image (see the top of this file). */
static __attribute__((noreturn)) void become_rlock(int exe_fd, char** argv, char** envp, int signo) {
  static const char empty[1] = {0};
  sys6(__NR_execveat, exe_fd, (long)empty, (long)argv, (long)envp, k_at_empty_path, 0);
  /* Nothing else can stop CMD's tree from here: say so loudly. */
  say("rlock: rlock's supervising process (rlock-run) was killed and rlock could not be started again to "
      "stop CMD's tree; stop it yourself (its lock expires by its lease)\n");
  exit_with(128 + signo);
}

int guardian_main(long* stack) {
  long argc = stack[0];
  char** argv = (char**)(stack + 1);
  char** envp = argv + argc + 1;

  const char* state = env_value(envp, "RLOCK_GUARDIAN_OF");
  uint64_t supervisor = 0, kill_flag = 0, exe_fd = 0, mask = 0;
  if (!state || !number(&state, 10, &supervisor) || !number(&state, 10, &kill_flag) ||
      !number(&state, 10, &exe_fd) || !number(&state, 16, &mask) || supervisor == 0 ||
      supervisor > 0x7fffffff || exe_fd > 0x7fffffff) {
    say("rlock: internal error: the guardian was started without its state\n");
    exit_with(70);
  }
  const char* name = env_value(envp, "RLOCK_GUARDIAN_NAME");
  if (name) {
    sys3(__NR_prctl, k_pr_set_name, (long)name, 0);
  }

  /* The signals stayed blocked across the exec; those that came meanwhile
   * are pending and are read here first. SIGCHLD must be among them (it is
   * what wakes this loop when the supervisor ends). */
  mask |= 1ULL << (k_sigchld - 1);
  sys6(__NR_rt_sigprocmask, k_sig_block, (long)&mask, 0, 8, 0, 0);
  long fd = sys6(__NR_signalfd4, -1, (long)&mask, 8, k_sfd_cloexec, 0, 0);
  if (fd < 0) {
    become_rlock((int)exe_fd, argv, envp, 0); /* rlock's own image watches instead */
  }
  for (;;) {
    struct wait_info info;
    memset(&info, 0, sizeof info);
    long r = sys6(__NR_waitid, k_p_pid, (long)supervisor, (long)&info, k_wexited | k_wnohang | k_wnowait, 0, 0);
    if (r == 0 && info.pid == (int32_t)supervisor) {
      if (info.code == k_cld_exited) {
        sys6(__NR_waitid, k_p_pid, (long)supervisor, (long)&info, k_wexited, 0, 0);
        exit_with(info.status & 0xff);
      }
      /* Killed: rlock's own image reaps it, kills CMD's tree and says so. */
      become_rlock((int)exe_fd, argv, envp, info.status);
    } else if (r < 0 && r != -k_eintr) {
      become_rlock((int)exe_fd, argv, envp, 0); /* cannot happen: let rlock judge */
    }
    struct signal_info taken[8];
    long n = sys3(__NR_read, fd, (long)taken, sizeof taken);
    for (long i = 0; n > 0 && i < n / (long)sizeof taken[0]; ++i) {
      int sig = (int)taken[i].signo;
      if (sig != k_sigchld && sig != k_sigttou) {
        sys3(__NR_kill, (long)supervisor, sig, 0); /* once each, as rlock's guardian does */
      }
    }
  }
}

__asm__(".text\n"
        ".global _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call guardian_main\n"
        "  hlt\n");
