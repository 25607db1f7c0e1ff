#pragma once

// Terminal-safe text: escaping arbitrary bytes for one-line messages, quoting,
// display width; this host's name.

#include <string>
#include <string_view>

namespace rlock {

// Makes arbitrary bytes safe for a one-line message: control characters, quotes
// and backslashes are escaped (\n, \t, \", \\, \xNN); valid UTF-8 is kept,
// except the code points a terminal would act on or that reorder the line: C1
// controls (U+0080..U+009F, e.g. U+009B, a CSI), bidirectional controls
// (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the line and
// paragraph separators (U+2028, U+2029), escaped as \uNNNN.
std::string printable(std::string_view bytes);

// A code point decoded from UTF-8 and the bytes it took; length 0: no valid
// sequence starts there (a stray byte, an overlong form, a surrogate, > U+10FFFF).
struct CodePoint {
  char32_t value = 0;
  std::size_t length = 0;
};
CodePoint decode_utf8(std::string_view bytes, std::size_t at);

// The columns a code point takes on a terminal, as wcwidth() would say in a
// UTF-8 locale for what printable() leaves: 0 for combining marks, zero-width
// characters and variation selectors; 2 for East Asian wide and fullwidth
// characters and emoji; else 1. A small table of its own: rlock sets no
// locale, and a host may have no UTF-8 locale to ask.
int column_width(char32_t cp);

// printable() in double quotes, for naming a lock in messages.
std::string quote(std::string_view bytes);

// A random token that looks like a Redisson owner field: "<uuid4>:<pid>",
// pid the holder's, the one its record names (for `acquire`, the shell that
// called it, not rlock's own short-lived process), so that `status` shows one
// pid for one holder.
std::string random_owner_token(long long pid);

// This machine's host name, or "unknown".
std::string host_name();

} // namespace rlock
