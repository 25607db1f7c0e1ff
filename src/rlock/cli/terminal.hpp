#pragma once

// The terminal: colour, width, and the `--watch` redraw loop.

#include <rlock/cli/table.hpp>
#include <rlock/core/duration.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace rlock::cli {

// Colour only on a terminal, and not when NO_COLOR is set to anything
// (no-color.org) or TERM is "dumb".
bool colour_wanted(bool is_terminal, const char* no_color, const char* term);

// The width `status` fits: COLUMNS when it is a number from 20 to 1000, else
// the terminal's (80 when under 20), else, not on a terminal, no limit
// (k_unlimited_width: every value whole, as lslocks and libsmartcols do).
std::size_t table_width(const char* columns, std::optional<std::size_t> terminal_columns);

// The style of a table printed on stdout now (its terminal, NO_COLOR, TERM, COLUMNS).
TableStyle stdout_style();

// A frame of `status --watch` cut to fit a terminal of `rows` lines: at most
// rows - 1 lines, the last one saying what was cut (nothing is cut without
// rows, or with fewer than 4).
std::string cut_to_rows(const std::string& text, std::optional<std::size_t> rows);

// status --watch: calls `frame` now and every `interval` until SIGINT, SIGTERM
// or SIGHUP, then returns 0. On a terminal (redraw) each frame replaces the
// last one in place, with the cursor hidden until the end (restored also when
// `frame` throws); a window resize redraws at once. Off a terminal each frame
// is printed after the last one. `frame` gets the terminal's width. When
// stdout's reader goes away (EPIPE), the watch ends with 0 too.
int watch(Millis interval, bool redraw, const std::function<std::string(const TableStyle&)>& frame);

} // namespace rlock::cli
