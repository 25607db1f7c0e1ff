#pragma once

#include <rlock/cli/options.hpp>
#include <rlock/lock/names.hpp>
#include <rlock/lock/store.hpp>

#include <memory>
#include <string>
#include <vector>

namespace rlock::cli {

// What a subcommand's handler works with (cli::execute makes it).
struct Context {
  const Invocation& inv;
  std::unique_ptr<lock::Store> store;
  std::vector<lock::LockKeys> locks; // of each name (acquire, release, renew, force-unlock, run)
  std::string label;                 // "run \"NAME\" on URL", for messages
};

} // namespace rlock::cli
