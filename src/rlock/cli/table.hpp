#pragma once

// `status`'s table: rows of the locks' typed state, fitted to a width, with
// its style (colour, width).

#include <rlock/lock/lock.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// A width that cuts nothing (stdout is not a terminal and COLUMNS is not set).
constexpr std::size_t k_unlimited_width = static_cast<std::size_t>(-1) / 4;

// How `status` draws its table: the width it must fit (COLUMNS, the
// terminal's, or k_unlimited_width off a terminal) and whether to colour it
// (a terminal without NO_COLOR; terminal.hpp decides).
struct TableStyle {
  std::size_t width = 80;
  bool colour = false;
};

// The columns of `status`, one row per holder (a read-write lock's readers and
// a semaphore's permits each get a row): NAME KIND N HELD TTL RENEWED W FENCE
// HOLDER. Every row fits style.width: the holder (host:pid command, or the
// owner token of a lock without rlock's record) is cut with "…" first, then
// the fence keeps only its last digits, and only then is the name cut. Under
// the table, one line per lock for what has no column: a fair lock's waiters
// in order, a semaphore's free permits, each Redlock master's view; with
// `details` (locks asked for by name), instead, everything known about each
// lock, uncut (status_line, and the last completion of `run --once-per`). ""
// when there is no lock to show.
std::string status_table(const std::vector<lock::LockState>& states, const TableStyle& style, bool details = false);

// How many terminal columns `text` takes: each code point's column_width
// (core/text: 2 for East Asian wide characters and emoji, 0 for combining
// marks), what printable() leaves (no control characters).
std::size_t display_width(std::string_view text);

// `text` cut to at most `width` columns, ending in "…" when it was cut.
std::string fit(std::string_view text, std::size_t width);

} // namespace rlock::cli
