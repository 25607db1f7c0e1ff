/* The guardian's interface to rlock (src/guardian/guardian.c; rlock's side:
 * run/spawn.cpp). C and C++. */
#ifndef RLOCK_GUARDIAN_H
#define RLOCK_GUARDIAN_H

#ifdef __cplusplus
extern "C" {
#endif

/* What the guardian writes to its report pipe: two 32-bit ints, the kind and
 * its value. */
enum guardian_report {
  guardian_started = 1, /* CMD runs: its pid */
  guardian_failed = 2,  /* CMD could not be started: the errno */
  guardian_stopped = 3, /* CMD was stopped (Ctrl-Z): its wait status */
  guardian_exited = 4,  /* CMD ended, some of its tree is left: its wait status */
  guardian_exited_last = 5, /* CMD ended, nothing of its tree is left: its wait status */
};

/* rlock's go, on the go pipe: two 32-bit ints, these flags and the size of
 * what follows, CMD's environment as NUL-terminated NAME=VALUE entries. */
enum guardian_go {
  guardian_go_tty = 1,    /* CMD gets the terminal's foreground */
  guardian_go_locked = 2, /* CMD runs with the lock: release it if rlock dies */
};

/* The guardian itself; returns its exit status. `envp` is written to. */
int rlock_guardian_main(int argc, char** argv, char** envp);

#ifdef __cplusplus
}
#endif

#endif
