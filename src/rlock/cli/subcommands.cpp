// The one subcommand table: every row, each defined in its subcommand's own
// file (cli/cmd_*.cpp), in the order help lists them.

#include <rlock/cli/subcommands.hpp>

namespace rlock::cli {

extern const Subcommand k_acquire_command;
extern const Subcommand k_release_command;
extern const Subcommand k_renew_command;
extern const Subcommand k_status_command;
extern const Subcommand k_force_unlock_command;
extern const Subcommand k_run_command;
extern const Subcommand k_history_command;
extern const Subcommand k_doctor_command;
extern const Subcommand k_check_command;

namespace {

constexpr const Subcommand* k_subcommands[] = {
    &k_acquire_command, &k_release_command, &k_renew_command,  &k_status_command, &k_force_unlock_command,
    &k_run_command,     &k_history_command, &k_doctor_command, &k_check_command,
};

} // namespace

std::span<const Subcommand* const> subcommands() {
  return k_subcommands;
}

const Subcommand* find_subcommand(std::string_view name) {
  for (const auto* sub : k_subcommands) {
    if (sub->name == name) {
      return sub;
    }
  }
  return nullptr;
}

std::string subcommand_names() {
  std::string out;
  for (const auto* sub : k_subcommands) {
    out += (out.empty() ? "" : ", ") + std::string(sub->name);
  }
  return out;
}

} // namespace rlock::cli
