// The whole command line (cli/parse: argv -> Invocation, `--` and CMD
// included), with an empty environment. The input is the words, each ended by
// a NUL byte, after "rlock". A parse gives an Invocation or help text, or
// throws UsageError (64); for run, CMD is exactly the words after the "--"
// that starts it.

#include "fuzz.hpp"

#include <rlock/cli/options.hpp>
#include <rlock/cli/secrets.hpp>
#include <rlock/cli/subcommands.hpp>

using namespace rlock;

namespace {

const char* no_environment(const char*) {
  return nullptr;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words{"rlock"};
  std::string_view rest = fuzz::bytes(data, size);
  while (!rest.empty() && words.size() < 64) {
    auto end = rest.find('\0');
    words.emplace_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  std::vector<const char*> argv;
  for (const auto& word : words) {
    argv.push_back(word.c_str());
  }
  argv.push_back(nullptr);
  int argc = static_cast<int>(words.size());
  (void)cli::subcommand_in(argc, argv.data());
  cli::ParseResult result;
  try {
    result = cli::parse(argc, argv.data(), no_environment);
  } catch (const UsageError&) {
    return 0;
  }
  if (!result.invocation) {
    return 0;
  }
  const cli::Invocation& inv = *result.invocation;
  FUZZ_CHECK(inv.sub != nullptr);
  FUZZ_CHECK(!inv.global.urls.empty());
  if (!inv.child_argv.empty()) {
    // CMD is the tail of argv, after a "--".
    std::size_t n = inv.child_argv.size();
    FUZZ_CHECK(inv.sub->takes_command && n + 2 <= words.size());
    FUZZ_CHECK(words[words.size() - n - 1] == "--");
    for (std::size_t i = 0; i < n; ++i) {
      FUZZ_CHECK(inv.child_argv[i] == words[words.size() - n + i]);
    }
    (void)cli::recorded_command_line(inv.child_argv, true);
    (void)cli::recorded_command_line(inv.child_argv, false);
  }
  for (std::size_t i = 1; i < inv.names.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      FUZZ_CHECK(inv.names[i] != inv.names[j]);
    }
  }
  return 0;
}
