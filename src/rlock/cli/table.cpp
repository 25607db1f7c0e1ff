// `status`'s table for people: one row per holder, permit or free lock,
// fitted to the terminal's width, coloured only on a terminal.

#include <rlock/cli/render.hpp>
#include <rlock/cli/table.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace rlock::cli {

namespace {

// The columns of the code point at text[at], and the bytes it takes (a byte
// that starts no valid sequence: one column, one byte).
std::pair<std::size_t, std::size_t> columns_at(std::string_view text, std::size_t at) {
  auto cp = decode_utf8(text, at);
  if (cp.length == 0) {
    return {1, 1};
  }
  return {static_cast<std::size_t>(column_width(cp.value)), cp.length};
}

} // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t at = 0; at < text.size();) {
    auto [columns, length] = columns_at(text, at);
    width += columns;
    at += length;
  }
  return width;
}

std::string fit(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) {
    return std::string(text);
  }
  if (width == 0) {
    return "";
  }
  // Keep what fits in width - 1 columns (a wide character is never split),
  // then the ellipsis.
  std::size_t used = 0;
  std::size_t end = 0;
  while (end < text.size()) {
    auto [columns, length] = columns_at(text, end);
    if (used + columns > width - 1) {
      break;
    }
    used += columns;
    end += length;
  }
  return std::string(text.substr(0, end)) + "…";
}

namespace {

enum Column { k_name, k_kind, k_count, k_held, k_ttl, k_renewed, k_waiters, k_fence, k_holder, k_columns };

constexpr std::array<std::string_view, k_columns> k_headers = {"NAME", "KIND",    "N",     "HELD",  "TTL",
                                                               "RENEWED", "W", "FENCE", "HOLDER"};
constexpr std::array<bool, k_columns> k_right = {false, false, true, true, true, true, true, true, false};
// Two spaces around the text columns, one between the right-aligned numbers.
constexpr std::array<std::size_t, k_columns> k_gap_after = {2, 2, 1, 1, 1, 1, 1, 2, 0};

// A number cut to `width` columns keeping its end (the digits that tell two
// fences apart), after "…". The cells it cuts are ASCII digits.
std::string fit_tail(std::string_view text, std::size_t width) {
  if (text.size() <= width) {
    return std::string(text);
  }
  if (width == 0) {
    return "";
  }
  return "…" + std::string(text.substr(text.size() - (width - 1)));
}

enum class Tone { plain, dim, warn, alarm };

struct Row {
  std::array<std::string, k_columns> cells;
  std::array<Tone, k_columns> tones{};
};

// A duration in a cell: whole seconds (rounded down) are precise enough for
// people, and keep the columns narrow.
std::string cell_duration(Millis duration) {
  if (duration.count() < 1000) {
    return duration.count() <= 0 ? "0s" : "<1s";
  }
  return format_duration(Millis(duration.count() / 1000 * 1000));
}

std::string ttl_cell(Millis ttl) {
  return ttl.count() == -1 ? "none" : cell_duration(ttl);
}

// "host:pid command" from rlock's record, or the owner token without one.
std::string holder_cell(const std::string& owner, const std::optional<lock::HolderRecord>& record) {
  if (!record) {
    return printable(owner);
  }
  if (!record->readable()) {
    return printable(owner) + " (unreadable record)";
  }
  std::string out = record->host ? printable(*record->host) : std::string("?");
  if (record->pid) {
    out += fmt::format(":{}", *record->pid);
  }
  if (record->command) {
    out += " " + printable(*record->command);
  }
  return out;
}

// One row for `owner`'s hold: the columns a record fills, and the tones that
// flag a lease without expiry or a heartbeat that stopped.
Row holder_row(const lock::LockState& state, std::string kind, const std::string& owner, long long count, Millis ttl,
               const std::optional<lock::HolderRecord>& record) {
  Row row;
  row.cells[k_name] = printable(state.name);
  row.cells[k_kind] = std::move(kind);
  row.cells[k_count] = count > 0 ? std::to_string(count) : "-";
  row.cells[k_ttl] = ttl_cell(ttl);
  row.tones[k_ttl] = ttl.count() == -1 ? Tone::alarm : Tone::plain;
  row.cells[k_waiters] = std::to_string(state.waiters.size());
  row.cells[k_holder] = holder_cell(owner, record);
  row.cells[k_held] = row.cells[k_renewed] = row.cells[k_fence] = "-";
  if (!record) {
    return row;
  }
  const auto now = state.server_now_ms;
  if (now && record->acquired_at_ms) {
    row.cells[k_held] = cell_duration(Millis(std::max(0LL, *now - *record->acquired_at_ms)));
  }
  if (record->kept_until_ms) {
    // Kept by run --hold-min after CMD ended: no renewal follows, none is
    // missed; the lease (TTL) runs to its end.
    row.cells[k_renewed] = "hold-min";
  } else if (now && record->renewed_at_ms) {
    long long age = std::max(0LL, *now - *record->renewed_at_ms);
    row.cells[k_renewed] = cell_duration(Millis(age)) + " ago";
    // `run` renews every TTL/3: two renewals missed is a holder to look at.
    row.tones[k_renewed] = record->ttl_ms && age > *record->ttl_ms * 2 / 3 ? Tone::warn : Tone::plain;
  }
  if (record->fence) {
    row.cells[k_fence] = std::to_string(*record->fence);
  }
  return row;
}

void add_rows(const lock::LockState& state, std::vector<Row>& rows) {
  if (state.layout == lock::Layout::semaphore) {
    for (const auto& permit : state.holders) {
      rows.push_back(holder_row(state, "permit", permit.owner, 1, permit.ttl, permit.record));
    }
    if (state.holders.empty()) {
      Row row = holder_row(state, "semaphore", "", 0, Millis(0), std::nullopt);
      row.cells[k_ttl] = "-";
      row.cells[k_holder] = "(no permit held)";
      row.tones.fill(Tone::dim);
      rows.push_back(std::move(row));
    }
    return;
  }
  if (!state.held()) {
    Row row = holder_row(state, "free", "", 0, Millis(0), std::nullopt);
    row.cells[k_ttl] = "-";
    row.tones.fill(Tone::dim);
    rows.push_back(std::move(row));
    return;
  }
  if (state.type != lock::KeyType::hash) {
    Row row = holder_row(state, "foreign", "", 0, state.ttl, std::nullopt);
    row.cells[k_holder] = fmt::format("(a {} key: not a lock rlock or Redisson made)", lock::key_type_name(state.type));
    row.tones[k_kind] = Tone::warn;
    rows.push_back(std::move(row));
    return;
  }
  if (!state.complete) {
    Row row = holder_row(state, "hash?", "", 0, state.ttl, std::nullopt);
    row.cells[k_holder] = "(a hash too big to be a lock: not read)";
    row.tones[k_kind] = Tone::warn;
    rows.push_back(std::move(row));
    return;
  }
  if (state.layout == lock::Layout::read || state.layout == lock::Layout::write) {
    const std::size_t before = rows.size();
    for (const auto& [owner, count] : state.owners) {
      if (owner.ends_with(":write")) {
        rows.push_back(holder_row(state, "write", owner, count, state.ttl, state.record));
      }
    }
    for (const auto& reader : state.holders) {
      if (!reader.owner.ends_with(":write")) {
        rows.push_back(holder_row(state, "read", reader.owner, reader.count, reader.ttl, reader.record));
      }
    }
    if (rows.size() == before) {
      rows.push_back(holder_row(state, mode_word(state), "", 0, state.ttl, std::nullopt));
    }
    return;
  }
  std::string kind = state.layout == lock::Layout::fair ? "fair" : state.record ? "rlock" : "redisson";
  const auto& [owner, count] = state.owners.empty() ? std::pair<std::string, long long>() : state.owners.front();
  rows.push_back(holder_row(state, kind, owner, count, state.ttl, state.record));
}

// What has no column: waiters in order, free permits, each master's view.
std::vector<std::string> notes_of(const lock::LockState& state) {
  std::vector<std::string> notes;
  const std::string name = printable(state.name);
  if (!state.waiters.empty()) {
    std::string line = fmt::format("{}: {} waiting, in order:", name, state.waiters.size());
    for (std::size_t i = 0; i < state.waiters.size(); ++i) {
      const auto& waiter = state.waiters[i];
      std::string who = waiter.record && waiter.record->readable() ? holder_cell(waiter.owner, waiter.record)
                                                                    : printable(waiter.owner);
      line += fmt::format(" {}. {}{}", i + 1, who,
                          waiter.waited ? fmt::format(" (for {})", cell_duration(*waiter.waited)) : std::string());
    }
    notes.push_back(std::move(line));
  }
  if (state.layout == lock::Layout::semaphore && state.permits_free) {
    notes.push_back(fmt::format("{}: {} permit{} free", name, *state.permits_free, *state.permits_free == 1 ? "" : "s"));
  }
  if (!state.nodes.empty()) {
    notes.push_back(fmt::format("{}: {}", name, masters_summary(state)));
    auto lines = node_lines(state);
    notes.insert(notes.end(), lines.begin(), lines.end());
  }
  return notes;
}

std::string painted(const std::string& text, Tone tone, bool colour) {
  if (!colour || tone == Tone::plain || text.empty()) {
    return text;
  }
  const char* code = tone == Tone::dim ? "2" : tone == Tone::warn ? "33" : "31";
  return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}

} // namespace

std::string status_table(const std::vector<lock::LockState>& states, const TableStyle& style, bool details) {
  if (states.empty()) {
    return "";
  }
  std::vector<Row> rows;
  std::vector<std::string> notes;
  for (const auto& state : states) {
    add_rows(state, rows);
    if (details) {
      notes.push_back(status_line(state));
      if (auto done = last_done_line(state); !done.empty()) {
        notes.push_back(done);
      }
    } else {
      auto more = notes_of(state);
      notes.insert(notes.end(), more.begin(), more.end());
    }
  }
  std::array<std::size_t, k_columns> widths{};
  for (std::size_t c = 0; c < k_columns; ++c) {
    widths[c] = display_width(k_headers[c]);
    for (const auto& row : rows) {
      widths[c] = std::max(widths[c], display_width(row.cells[c]));
    }
  }
  // Too wide: the holder gives way first (to 24 columns, then 12: `status
  // NAME` shows it whole), then the fence (to its header's 5 columns, keeping
  // its last digits: "…8207"); the name, which says which lock a row is, is
  // cut last (to 8). The other columns are short.
  std::size_t total = 0;
  for (std::size_t c = 0; c < k_columns; ++c) {
    total += widths[c] + k_gap_after[c];
  }
  auto shrink = [&](Column column, std::size_t floor) {
    if (total <= style.width || widths[column] <= floor) {
      return;
    }
    std::size_t take = std::min(total - style.width, widths[column] - floor);
    widths[column] -= take;
    total -= take;
  };
  shrink(k_holder, 24);
  shrink(k_holder, 12);
  shrink(k_fence, display_width(k_headers[k_fence]));
  shrink(k_name, 8);

  auto line = [&](const std::array<std::string, k_columns>& cells, const std::array<Tone, k_columns>& tones,
                  bool header) {
    std::string out;
    for (std::size_t c = 0; c < k_columns; ++c) {
      std::string text = c == k_fence ? fit_tail(cells[c], widths[c]) : fit(cells[c], widths[c]);
      std::size_t pad = widths[c] - display_width(text);
      bool last = c + 1 == k_columns;
      std::string cell = k_right[c] ? std::string(pad, ' ') + text : text + (last ? "" : std::string(pad, ' '));
      out += header && style.colour ? "\x1b[1m" + cell + "\x1b[0m" : painted(cell, tones[c], style.colour);
      out += std::string(k_gap_after[c], ' ');
    }
    while (!out.empty() && out.back() == ' ') {
      out.pop_back();
    }
    return out + "\n";
  };
  std::array<std::string, k_columns> header_cells;
  std::copy(k_headers.begin(), k_headers.end(), header_cells.begin());
  std::string out = line(header_cells, {}, true);
  for (const auto& row : rows) {
    out += line(row.cells, row.tones, false);
  }
  if (!notes.empty()) {
    out += "\n";
    for (const auto& note : notes) {
      out += (details ? note : fit(note, style.width)) + "\n";
    }
  }
  return out;
}

} // namespace rlock::cli
