#pragma once

// CLI11, for the files that declare flags (cli/options.cpp, cli/flags.cpp,
// cli/cmd_*.cpp), without the static stream object <iostream> brings.

// CLI11 includes <iostream>, and with libstdc++ before GCC 13 every file that
// does holds a static std::ios_base::Init, which builds cin/cout/cerr and
// their locale at each start of rlock, before main, for streams rlock never
// uses (it writes through fmt and its own log sink; CLI11 writes to std::cout
// only from App::exit and for deprecated or retired options, which rlock has
// not). So CLI11 gets the declarations of <iostream> without that object.
#include <istream>
#include <ostream>
#if defined(__GLIBCXX__) && !defined(_GLIBCXX_IOSTREAM)
#define _GLIBCXX_IOSTREAM 1
namespace std {
extern istream cin;
extern ostream cout;
extern ostream cerr;
extern ostream clog;
} // namespace std
#endif
#include <CLI/CLI.hpp>
