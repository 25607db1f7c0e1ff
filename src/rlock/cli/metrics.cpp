// `status --format openmetrics`: the locks as Prometheus text (gauges, label
// values escaped one way per name), and the atomic write of --output FILE.

#include <rlock/cli/check_judge.hpp>
#include <rlock/cli/metrics.hpp>
#include <rlock/cli/render.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/text.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

namespace rlock::cli {

namespace {

std::string metric_seconds(Millis ms) {
  return fmt::format("{:.3f}", static_cast<double>(ms.count()) / 1000.0);
}

struct MetricFamily {
  const char* name;
  const char* help;
  // The sample's value for a lock, or "" for no sample.
  std::function<std::string(const lock::LockState&, const LockFigures&)> value;
};

// The lock's labels: {name="..."} and, for rlock_lock_info, more.
std::string metric_labels(const std::vector<std::pair<const char*, std::string>>& labels) {
  std::string out;
  for (const auto& [key, value] : labels) {
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "{" : ",", key, metric_label_value(value));
  }
  return out + "}";
}

} // namespace

std::string metric_label_value(std::string_view bytes) {
  // Distinct names must give distinct labels (node_exporter rejects a file
  // with a series twice): a byte that is not UTF-8 is written as the text
  // \xNN, and so that no name can spell that text, a backslash is doubled
  // first. Then the format's own escapes.
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t at = 0; at < bytes.size();) {
    auto cp = decode_utf8(bytes, at);
    if (cp.length == 0) {
      out += fmt::format("\\\\x{:02x}", static_cast<unsigned char>(bytes[at]));
      ++at;
      continue;
    }
    char c = bytes[at];
    if (cp.length == 1 && (c == '\\' || c == '"' || c == '\n')) {
      out += c == '\n' ? "\\n" : c == '"' ? "\\\"" : "\\\\\\\\";
    } else {
      out.append(bytes.substr(at, cp.length));
    }
    at += cp.length;
  }
  return out;
}

std::string openmetrics_text(const std::vector<lock::LockState>& given) {
  // Each name once: a series twice makes node_exporter reject the whole file.
  std::vector<lock::LockState> states;
  for (const auto& state : given) {
    if (std::none_of(states.begin(), states.end(), [&](const auto& kept) { return kept.name == state.name; })) {
      states.push_back(state);
    }
  }
  const MetricFamily families[] = {
      {"rlock_lock_held", "1 when the lock is held, 0 when it is free.",
       [](const lock::LockState&, const LockFigures& f) { return std::string(f.held ? "1" : "0"); }},
      {"rlock_lock_held_seconds",
       "Seconds since the oldest acquisition rlock recorded (server clock); 0 when free, none when unknown.",
       [](const lock::LockState&, const LockFigures& f) {
         return f.held_for ? metric_seconds(*f.held_for) : std::string();
       }},
      {"rlock_lock_ttl_seconds", "Seconds left of the lease of a held lock (+Inf: the key has no expiry).",
       [](const lock::LockState&, const LockFigures& f) {
         return f.no_expiry ? std::string("+Inf") : f.ttl ? metric_seconds(*f.ttl) : std::string();
       }},
      {"rlock_lock_waiters", "Waiters queued for a fair lock (other waiters leave no trace in Redis).",
       [](const lock::LockState&, const LockFigures& f) { return std::to_string(f.waiters); }},
      {"rlock_lock_renewed_age_seconds",
       "Seconds since the holder last renewed the lease (or took it, when never renewed), server clock.",
       [](const lock::LockState&, const LockFigures& f) {
         return f.renewed_ago ? metric_seconds(*f.renewed_ago) : std::string();
       }},
      {"rlock_job_last_done_timestamp_seconds",
       "When a run --once-per job last completed (exit 0), Unix time on the server's clock.",
       [](const lock::LockState&, const LockFigures& f) {
         return f.done_at_ms ? metric_seconds(Millis(*f.done_at_ms)) : std::string();
       }},
  };
  std::vector<LockFigures> figures;
  for (const auto& state : states) {
    figures.push_back(figures_of(state));
  }
  std::string out;
  for (const auto& family : families) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", family.name, family.help, family.name);
    for (std::size_t i = 0; i < states.size(); ++i) {
      if (auto value = family.value(states[i], figures[i]); !value.empty()) {
        out += fmt::format("{}{} {}\n", family.name, metric_labels({{"name", states[i].name}}), value);
      }
    }
  }
  out += "# HELP rlock_lock_info Who holds a held lock (value 1): kind, mode and the holder rlock recorded.\n"
         "# TYPE rlock_lock_info gauge\n";
  for (const auto& state : states) {
    if (!state.held()) {
      continue;
    }
    // A read-write lock's or a semaphore's record is its holders' (the first that has one).
    auto record = state.record;
    for (std::size_t i = 0; !record && i < state.holders.size(); ++i) {
      record = state.holders[i].record;
    }
    auto text = [&](const std::optional<std::string>& value) { return value ? *value : std::string(); };
    out += fmt::format(
        "rlock_lock_info{} 1\n",
        metric_labels({{"name", state.name},
                       {"kind", lock_kind(state)},
                       {"mode", mode_word(state)},
                       {"holder_host", record ? text(record->host) : std::string()},
                       {"holder_pid", record && record->pid ? std::to_string(*record->pid) : std::string()},
                       {"holder_command", record ? text(record->command) : std::string()},
                       {"fence", record && record->fence ? std::to_string(*record->fence) : std::string()}}));
  }
  return out + "# EOF\n";
}

namespace {

// Whether a failure to create or replace a file (errno `error`) is about the
// path the user gave (a missing or unwritable directory, a directory where the
// file should be): then it is theirs to fix (Outcome::bad_setting, 64), not an
// internal error.
bool user_path_error(int error) {
  switch (error) {
  case ENOENT:
  case ENOTDIR:
  case EISDIR:
  case EACCES:
  case EPERM:
  case EROFS:
  case ELOOP:
  case ENAMETOOLONG:
    return true;
  default:
    return false;
  }
}

} // namespace

void write_file_atomically(const std::string& path, std::string_view text) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string temp = fmt::format("{}/.{}.XXXXXX", dir, base);
  auto fail = [&](const char* what) {
    int error = errno;
    std::string why = std::strerror(error);
    if (error == ENOENT) {
      why = fmt::format("the directory {} does not exist", quote(dir));
    } else if (error == ENOTDIR) {
      why = fmt::format("{} is not a directory", quote(dir));
    }
    throw Error(user_path_error(error) ? Outcome::bad_setting : Outcome::failed,
                fmt::format("--output {}: {}: {}", quote(path), what, why));
  };
  struct stat st {};
  if (base.empty() || (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    throw Error(Outcome::bad_setting,
                fmt::format("--output {}: is a directory; give the name of the file to write", quote(path)));
  }
  int fd = mkstemp(temp.data());
  if (fd < 0) {
    fail("cannot create a temp file beside it");
  }
  auto give_up = [&](const char* what) {
    int error = errno;
    close(fd);
    unlink(temp.c_str());
    errno = error;
    fail(what);
  };
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      give_up("cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0644 & ~mask) != 0 || fsync(fd) != 0) {
    give_up("cannot finish the temp file");
  }
  if (close(fd) != 0) {
    unlink(temp.c_str());
    fail("cannot close the temp file");
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    unlink(temp.c_str());
    errno = error;
    fail("cannot rename the temp file over it");
  }
}

} // namespace rlock::cli
