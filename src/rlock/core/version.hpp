#pragma once

// rlock's version and the git revision it was built from.

#include <string_view>

namespace rlock {

// rlock's version, project(VERSION) in CMakeLists.txt.
constexpr std::string_view k_version = RLOCK_VERSION;

// The git revision this binary was built from: "abc1234", "abc1234-dirty" when
// tracked files had changes, or "unknown" when it was not built from a git
// checkout (a tarball). Generated at build time by cmake/revision.cmake.
std::string_view build_revision();

} // namespace rlock
