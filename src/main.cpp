// rlock: distributed locks in Redis from the command line. Everything lives in
// the rlock_core library (see ARCHITECTURE.md); this file only calls into it.
#include <rlock/cli/commands.hpp>

int main(int argc, char** argv) {
  return rlock::cli::main(argc, argv);
}
