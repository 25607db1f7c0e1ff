// The terminal: whether to colour, its width, and `status --watch`'s redraw
// loop (interruptible, ends on a closed pipe).

#include <rlock/cli/terminal.hpp>
#include <rlock/core/clock.hpp>
#include <rlock/core/errors.hpp>
#include <rlock/core/signals.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace rlock::cli {

bool colour_wanted(bool is_terminal, const char* no_color, const char* term) {
  if (!is_terminal || (no_color != nullptr && *no_color != '\0')) {
    return false;
  }
  return term == nullptr || std::string_view(term) != "dumb";
}

std::size_t table_width(const char* columns, std::optional<std::size_t> terminal_columns) {
  if (columns != nullptr) {
    std::size_t value = 0;
    std::string_view text(columns);
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && ptr == text.data() + text.size() && value >= 20 && value <= 1000) {
      return value;
    }
  }
  if (!terminal_columns) {
    return k_unlimited_width; // not a terminal: whole values, as lslocks does
  }
  return *terminal_columns >= 20 ? *terminal_columns : 80;
}

namespace {

struct Size {
  std::optional<std::size_t> columns;
  std::optional<std::size_t> rows;
};

Size terminal_size() {
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return {size.ws_col, size.ws_row > 0 ? std::optional<std::size_t>(size.ws_row) : std::nullopt};
  }
  return {};
}

// False when stdout's reader has gone (EPIPE: `status --watch | head` with
// SIGPIPE ignored); throws for any other write error.
bool write_all(std::string_view text) {
  std::clearerr(stdout);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) {
    return true;
  }
  if (errno == EPIPE) {
    return false;
  }
  throw Error(Outcome::failed, fmt::format("cannot write to stdout: {}", std::strerror(errno)));
}

// Hides the cursor while it lives; shows it again however the watch ends.
class HiddenCursor {
public:
  explicit HiddenCursor(bool active) : m_active(active) {
    if (m_active) {
      write_all("\x1b[?25l");
    }
  }
  ~HiddenCursor() {
    if (m_active) {
      std::fputs("\x1b[?25h", stdout); // no throwing here: best effort
      std::fflush(stdout);
    }
  }
  HiddenCursor(const HiddenCursor&) = delete;
  HiddenCursor& operator=(const HiddenCursor&) = delete;

private:
  bool m_active;
};

// The style of a table on stdout, a terminal of `size` (none: not a terminal).
TableStyle style_for(const Size& size) {
  return {table_width(std::getenv("COLUMNS"), size.columns),
          colour_wanted(isatty(STDOUT_FILENO) != 0, std::getenv("NO_COLOR"), std::getenv("TERM"))};
}

} // namespace

TableStyle stdout_style() {
  return style_for(terminal_size());
}

std::string cut_to_rows(const std::string& screen, std::optional<std::size_t> rows) {
  if (!rows || *rows < 4) {
    return screen;
  }
  std::size_t lines = 0;
  for (std::size_t at = 0; at < screen.size(); ++at) {
    if (screen[at] != '\n') {
      continue;
    }
    // Keep rows - 1 lines: the last row says what was cut (and the terminal
    // does not scroll, which would break the redraw).
    if (++lines == *rows - 1 && at + 1 < screen.size()) {
      std::size_t more = static_cast<std::size_t>(std::count(screen.begin() + static_cast<long>(at) + 1, screen.end(), '\n'));
      return screen.substr(0, at + 1) + fmt::format("… {} more line{} (a bigger window, or rlock status | less)", more,
                                                    more == 1 ? "" : "s");
    }
  }
  return screen;
}

int watch(Millis interval, bool redraw, const std::function<std::string(const TableStyle&)>& frame) {
  SignalFd signals({SIGINT, SIGTERM, SIGHUP, SIGWINCH});
  HiddenCursor cursor(redraw);
  for (;;) {
    const Size size = terminal_size(); // once a frame: a resize takes effect at the next
    std::string text = frame(style_for(size));
    if (redraw) {
      // Home, each line over the last frame's (erasing what it leaves), then
      // everything below: no blank flash between frames.
      std::string screen = "\x1b[H";
      std::string cut = cut_to_rows(text, size.rows);
      std::size_t start = 0;
      for (std::size_t end; (end = cut.find('\n', start)) != std::string::npos; start = end + 1) {
        screen += cut.substr(start, end - start) + "\x1b[K\n";
      }
      screen += cut.substr(start) + "\x1b[K\x1b[J";
      text = std::move(screen);
    }
    if (!write_all(text)) {
      return 0; // nobody reads the frames any more
    }
    pollfd wait{signals.fd(), POLLIN, 0};
    const TimePoint deadline = Clock::now() + interval;
    for (int left; (left = poll_timeout_ms(deadline)) > 0;) {
      if (::poll(&wait, 1, left) <= 0) {
        continue;
      }
      int sig = signals.take();
      if (sig == SIGWINCH) {
        break; // redraw at the new size now
      }
      if (sig != 0) {
        if (redraw) {
          write_all("\n");
        }
        return 0;
      }
    }
  }
}

} // namespace rlock::cli
