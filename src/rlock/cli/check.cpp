// `rlock check`'s one line: each lock's findings in words and the perfdata,
// and the UNKNOWN line of an error (Monitoring Plugins rules).

#include <rlock/cli/check.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace rlock::cli {

namespace {

// At most this many bytes of a name in check's line (a 4 KB name would make
// a line some plugin runners cut): cut at a UTF-8 boundary, marked "...".
constexpr std::size_t k_check_name_bytes = 200;

std::string check_name(std::string_view name) {
  if (name.size() <= k_check_name_bytes) {
    return printable(name);
  }
  std::size_t cut = k_check_name_bytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) {
    --cut; // not inside a UTF-8 sequence
  }
  return printable(name.substr(0, cut)) + "...";
}

// The text part may not hold the '|' that starts perfdata.
std::string check_text(std::string text) {
  std::string out;
  for (char c : text) {
    out += c == '|' ? std::string("\\x7c") : std::string(1, c);
  }
  return out;
}

// Perfdata value: seconds with at most 3 decimals, "U" when unknown.
std::string perf_seconds(const std::optional<Millis>& ms) {
  if (!ms) {
    return "U";
  }
  std::string text = fmt::format("{:.3f}", static_cast<double>(ms->count()) / 1000.0);
  while (text.back() == '0') {
    text.pop_back();
  }
  if (text.back() == '.') {
    text.pop_back();
  }
  return text + "s";
}

std::string perf_threshold_seconds(const std::optional<Millis>& ms) {
  if (!ms) {
    return "";
  }
  auto text = perf_seconds(ms);
  return text.substr(0, text.size() - 1); // thresholds carry no unit
}

std::string finding_text(const Finding& finding) {
  switch (finding.problem) {
  case Problem::held_too_long:
    return fmt::format("held {} (over {})", format_duration(finding.value), format_duration(finding.limit));
  case Problem::held_since_unknown:
    return "held since an unknown time (no rlock record: taken by another client?)";
  case Problem::holder_dead:
    return fmt::format("holder is gone: {} (force-unlock --if-dead would remove it)", finding.detail);
  case Problem::too_many_waiters:
    return fmt::format("{} waiters (over {})", finding.count, finding.limit_count);
  case Problem::no_expiry:
    return "held without an expiry (it never frees itself)";
  case Problem::done_too_long_ago:
    return fmt::format("last done {} ago (over {})", format_duration(finding.value),
                       format_duration(finding.limit));
  case Problem::never_done:
    return finding.detail.empty()
               ? fmt::format("no completion recorded (--done-within {})", format_duration(finding.limit))
               : "its completion record cannot be read";
  case Problem::no_server_time:
    return "the server's clock was not read";
  }
  return "";
}

// "held 12s", "free": what an OK lock is.
std::string lock_summary(const LockFigures& figures) {
  if (!figures.held) {
    return "free";
  }
  return figures.held_for ? "held " + format_duration(*figures.held_for) : std::string("held");
}

} // namespace

std::string perf_label(std::string_view name, std::string_view what) {
  std::string label = check_name(name) + " " + std::string(what);
  std::string out = "'";
  for (char c : label) {
    out += c == '\''  ? std::string("''")
           : c == '=' ? std::string("\\x3d")
           : c == '|' ? std::string("\\x7c")
                      : std::string(1, c);
  }
  return out + "'";
}

std::string check_line(const std::vector<lock::LockState>& states, const std::vector<LockVerdict>& verdicts,
                       const CheckSpec& spec, bool named) {
  CheckState overall = CheckState::ok;
  for (const auto& verdict : verdicts) {
    overall = worse(overall, verdict.state);
  }
  // The locks that are not OK, worst first (stable: in the order listed).
  std::vector<std::size_t> order(states.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
    return worse(verdicts[a].state, verdicts[b].state) == verdicts[a].state &&
           verdicts[a].state != verdicts[b].state;
  });
  std::string text;
  std::size_t bad = 0;
  for (auto i : order) {
    const auto& verdict = verdicts[i];
    if (verdict.state == CheckState::ok) {
      continue;
    }
    ++bad;
    std::string what;
    for (const auto& finding : verdict.findings) {
      what += (what.empty() ? "" : ", ") + finding_text(finding);
    }
    text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", "\"" + check_name(states[i].name) + "\"", what);
  }
  std::size_t held = 0;
  for (const auto& verdict : verdicts) {
    held += verdict.figures.held ? 1 : 0;
  }
  std::string counts =
      fmt::format("{} lock{} checked, {} held", states.size(), states.size() == 1 ? "" : "s", held);
  if (states.empty()) {
    text = named ? "no locks named" : "no locks found";
  } else if (bad == 0) {
    text = states.size() == 1 ? fmt::format("{}: {}", "\"" + check_name(states.front().name) + "\"",
                                            lock_summary(verdicts.front().figures))
                              : counts;
  } else if (states.size() > bad) {
    text += fmt::format(" ({})", counts);
  }
  std::string perf;
  auto add = [&](std::string_view name, std::string_view what, const std::string& value,
                 const std::string& warn, const std::string& crit) {
    perf += fmt::format(" {}={};{};{};0;", perf_label(name, what), value, warn, crit);
  };
  for (std::size_t i = 0; i < states.size(); ++i) {
    const auto& name = states[i].name;
    const auto& figures = verdicts[i].figures;
    add(name, "held", perf_seconds(figures.held_for),
        perf_threshold_seconds(spec.held_longer ? std::optional(spec.held_longer->warn) : std::nullopt),
        perf_threshold_seconds(spec.held_longer ? std::optional(spec.held_longer->crit) : std::nullopt));
    add(name, "ttl",
        figures.no_expiry ? std::string("U") : perf_seconds(figures.held ? figures.ttl : Millis(0)), "", "");
    add(name, "waiters", std::to_string(figures.waiters),
        spec.waiters ? std::to_string(spec.waiters->warn) : "",
        spec.waiters ? std::to_string(spec.waiters->crit) : "");
    add(name, "renewed_age", perf_seconds(figures.renewed_ago), "", "");
    if (spec.done_within || states[i].last_done) {
      add(name, "done_age", perf_seconds(figures.done_ago), "", perf_threshold_seconds(spec.done_within));
    }
  }
  // Strings from Redis went through printable(): no newline is left in them.
  return fmt::format("RLOCK {} - {} |{}\n", state_word(overall), check_text(text), perf);
}

int check_unknown(const std::string& context, const std::string& why) {
  std::string text = context.empty() ? why : context + ": " + why;
  // Messages escape what they quote from Redis; a newline of our own would still break the one line.
  std::string line;
  for (char c : text) {
    line += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  fmt::print("RLOCK UNKNOWN - {}\n", check_text(line));
  std::fflush(stdout);
  return static_cast<int>(CheckState::unknown);
}

} // namespace rlock::cli
