#pragma once

// A process tree as /proc shows it: descendants, signals to all, kill_tree.

#include <string>
#include <sys/types.h>
#include <vector>

namespace rlock::run {

// A live (not zombie) process, as /proc shows it.
struct Process {
  pid_t pid = 0;
  std::string name; // /proc/PID/stat's comm, e.g. "sleep"
};

// Every live descendant of `root` (children, grandchildren...), read from
// /proc. Processes appear and vanish while it reads: never throws for that.
std::vector<Process> descendants(pid_t root);

// Sends `sig` to CMD's process group `pgid` and to every live descendant of
// `root` outside that group (each process gets it once). Returns the
// descendants it found, for messages.
std::vector<Process> signal_tree(pid_t root, pid_t pgid, int sig);

// SIGKILLs every descendant of `root` until a look at /proc finds none alive
// (a process can fork between a look and the kill; a bounded number of looks).
void kill_tree(pid_t root);

// "sleep (pid 12), sh (pid 13)" for a warning; at most `limit` named.
std::string describe(const std::vector<Process>& processes, std::size_t limit = 5);

// The exit status rlock passes on for a waitpid status: the exit code, or
// 128+N for death by signal N (as flock(1) does).
int exit_status_of(int wait_status);

} // namespace rlock::run
