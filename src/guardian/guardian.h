/* The protocol between `rlock run` (run/spawn.cpp) and CMD's guardian
 * (guardian.c), stated once, with its pure encoders and decoders. C and C++.
 *
 * Its name, the RLOCK_GUARDIAN variable's fields and their order, the go
 * message, the reports and the guardian's exit codes (unit-tested:
 * tests/unit/test_run_guardian_protocol.cpp). */
#ifndef RLOCK_GUARDIAN_H
#define RLOCK_GUARDIAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The guardian's argv[0] and process name (ps shows it). */
#define GUARDIAN_NAME "rlock-guardian"
/* The environment variable that carries its state (never CMD's). */
#define GUARDIAN_ENV "RLOCK_GUARDIAN"

/* The guardian's own exit codes: rlock's for the same outcomes (run/spawn.cpp
 * static_asserts them equal to core/errors.hpp's ExitCode). */
enum guardian_exit {
  guardian_exit_software = 70,  /* started without its state, or rlock could not be started again */
  guardian_exit_not_found = 127, /* CMD's child: its exec failed (the errno goes to rlock) */
};

/* RLOCK_GUARDIAN="ROLE PARENT KILL EXE_FD SPEC_FD REPORT_FD GO_FD DEATH_SIGNAL IMAGE_FD":
 * a role letter, then these numbers, in this order, one space apart:
 *   PARENT: rlock's pid; KILL: 1 to kill CMD's tree when rlock dies (0:
 *   --on-lost ignore); EXE_FD: rlock's program file; SPEC_FD: what the
 *   orphaned rlock needs to release the lock (-1: no lock); REPORT_FD: the
 *   pipe to rlock; GO_FD: the pipe rlock's go comes on (for the orphaned
 *   role, -1: rlock died before its go, nothing was started); DEATH_SIGNAL:
 *   the guardian's parent-death signal; IMAGE_FD: the memfd the guardian was
 *   executed from, open across that exec (an emulator that binfmt_misc starts
 *   without its O flag, as Debian 12's update-binfmts registers qemu-user,
 *   opens the program by its /proc/self/fd path after the exec), which the
 *   guardian closes first (-1: none open, as in the orphaned role). */
enum guardian_field {
  guardian_parent,
  guardian_kill,
  guardian_exe,
  guardian_spec,
  guardian_report,
  guardian_go,
  guardian_death_signal,
  guardian_image,
  guardian_fields /* how many */
};

/* The role letter: the guardian, as rlock started it; and rlock executed again
 * by the guardian after rlock's death (the same numbers). */
enum guardian_role {
  guardian_role_guardian = 'G',
  guardian_role_orphaned = 'O',
};

struct guardian_state {
  char role;
  long field[guardian_fields];
};

/* The variable's value for `state` ("G 123 1 5 6 7 8 10 9", no name) into `out`
 * (`size` bytes, NUL-terminated); its length, or 0 when it does not fit. */
static inline size_t guardian_state_encode(const struct guardian_state* state, char* out, size_t size) {
  size_t n = 0;
  if (size < 2) {
    return 0;
  }
  out[n++] = state->role;
  for (int i = 0; i < guardian_fields; ++i) {
    char digits[24];
    int count = 0;
    long value = state->field[i];
    unsigned long magnitude = value < 0 ? 0UL - (unsigned long)value : (unsigned long)value;
    do {
      digits[count++] = (char)('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude > 0);
    if (value < 0) {
      digits[count++] = '-';
    }
    if (n + 1 + (size_t)count >= size) {
      return 0;
    }
    out[n++] = ' ';
    while (count > 0) {
      out[n++] = digits[--count];
    }
  }
  out[n] = 0;
  return n;
}

/* Reads the variable's value (after "RLOCK_GUARDIAN="): a role letter, then
 * exactly guardian_fields numbers (a '-' allowed, 1 to 10 digits) one space
 * apart, nothing after; PARENT above 0, EXE_FD, REPORT_FD and GO_FD at least
 * 0, DEATH_SIGNAL from 1 to 64, IMAGE_FD at least -1. 1 when it is that, else 0. */
static inline int guardian_state_decode(const char* value, struct guardian_state* state) {
  const char* at = value;
  if (at == 0 || (at[0] != guardian_role_guardian && at[0] != guardian_role_orphaned) || at[1] != ' ') {
    return 0;
  }
  state->role = at[0];
  at += 2;
  for (int i = 0; i < guardian_fields; ++i) {
    int negative = *at == '-';
    at += negative;
    long v = 0;
    int digits = 0;
    for (; *at >= '0' && *at <= '9'; ++at, ++digits) {
      v = v * 10 + (*at - '0');
      if (digits >= 10) {
        return 0;
      }
    }
    if (digits == 0 || (i + 1 < guardian_fields ? *at != ' ' : *at != 0)) {
      return 0;
    }
    at += i + 1 < guardian_fields;
    state->field[i] = negative ? -v : v;
  }
  const long* f = state->field;
  return f[guardian_parent] > 0 && f[guardian_exe] >= 0 && f[guardian_report] >= 0 &&
         (f[guardian_go] >= 0 || (state->role == guardian_role_orphaned && f[guardian_go] == -1)) &&
         f[guardian_death_signal] >= 1 && f[guardian_death_signal] <= 64 && f[guardian_image] >= -1;
}

/* rlock's go, on GO_FD: two 32-bit ints, these flags and the size of what
 * follows, CMD's environment as NUL-terminated NAME=VALUE entries (at most
 * guardian_go_max_env bytes). Or, when rlock ends without starting CMD (busy,
 * skipped, an error), the cancel: that flag alone and size 0. The pipe closing
 * with neither is rlock's death. */
enum guardian_go {
  guardian_go_tty = 1,    /* CMD gets the terminal's foreground */
  guardian_go_locked = 2, /* CMD runs with the lock: release it if rlock dies */
  guardian_go_cancel = 4, /* no CMD: rlock ends, having held nothing for it */
};
#define guardian_go_max_env (1L << 26)

struct guardian_go_message {
  int tty;
  int locked;
  long env_size;
  int cancel;
};

static inline void guardian_go_encode(const struct guardian_go_message* go, int32_t out[2]) {
  out[0] = go->cancel ? guardian_go_cancel
                      : (go->tty ? guardian_go_tty : 0) | (go->locked ? guardian_go_locked : 0);
  out[1] = go->cancel ? 0 : (int32_t)go->env_size;
}

/* 1 when `in` is a go whose environment size is from 0 to guardian_go_max_env,
 * or the cancel (the flag alone, size 0). */
static inline int guardian_go_decode(const int32_t in[2], struct guardian_go_message* go) {
  go->tty = (in[0] & guardian_go_tty) != 0;
  go->locked = (in[0] & guardian_go_locked) != 0;
  go->cancel = (in[0] & guardian_go_cancel) != 0;
  go->env_size = in[1];
  if (go->cancel) {
    return in[0] == guardian_go_cancel && in[1] == 0;
  }
  return in[1] >= 0 && in[1] <= guardian_go_max_env;
}

/* The guardian is two processes (guardian.c): the one rlock started, in a
 * process group of its own, and its child the keeper, CMD's parent, which
 * reads the go and writes every report. What the keeper got, in a page the
 * two share, for the hand-over after rlock's death: */
enum guardian_went {
  guardian_went_none = 0,     /* no go yet: nothing was started */
  guardian_went_unlocked = 1, /* CMD started without the lock (--if-unavailable run) */
  guardian_went_locked = 2,   /* CMD started with the lock */
};

/* What the keeper writes to REPORT_FD: two 32-bit ints, the kind and its
 * value. Its own pid comes first, once, before the go; then CMD's start (or
 * why not), once; then its stops, and its end once, the last report. */
enum guardian_report {
  guardian_started = 1,     /* CMD runs: its pid */
  guardian_failed = 2,      /* CMD could not be started: the errno */
  guardian_stopped = 3,     /* CMD was stopped (Ctrl-Z): its wait status */
  guardian_exited = 4,      /* CMD ended, some of its tree is left: its wait status */
  guardian_exited_last = 5, /* CMD ended, nothing of its tree is left: its wait status */
  guardian_keeper = 6,      /* the keeper runs: its pid (the root of CMD's tree) */
};

struct guardian_event {
  enum guardian_report kind;
  int32_t value;
};

static inline void guardian_report_encode(const struct guardian_event* event, int32_t out[2]) {
  out[0] = (int32_t)event->kind;
  out[1] = event->value;
}

/* 1 when `in` is one of the reports above (a pid above 0 for started and keeper). */
static inline int guardian_report_decode(const int32_t in[2], struct guardian_event* event) {
  if (in[0] < guardian_started || in[0] > guardian_keeper ||
      ((in[0] == guardian_started || in[0] == guardian_keeper) && in[1] <= 0)) {
    return 0;
  }
  event->kind = (enum guardian_report)in[0];
  event->value = in[1];
  return 1;
}

/* The guardian itself; returns its exit status. `envp` is written to. */
int rlock_guardian_main(int argc, char** argv, char** envp);

#ifdef __cplusplus
}
#endif

#endif
