#pragma once

// What a subcommand's handler works with: the parsed invocation, the store
// (nothing connected yet), each name's keys and the label for messages.

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
  std::vector<lock::LockKeys> locks; // of each name, when the row takes_lock_names
  std::string label;                 // "run \"NAME\" on URL", for messages
};

} // namespace rlock::cli
