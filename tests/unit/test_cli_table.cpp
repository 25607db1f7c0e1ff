#include <rlock/cli/render.hpp>
#include <rlock/cli/render_json.hpp>
#include <rlock/cli/table.hpp>
#include <rlock/cli/terminal.hpp>

#include <doctest/doctest.h>

#include <sstream>

using rlock::Millis;
using rlock::cli::display_width;
using rlock::cli::status_table;
using rlock::cli::TableStyle;

namespace {

constexpr long long k_now = 1'700'000'100'000;

rlock::lock::LockState rlock_state(std::string name, std::string command) {
  rlock::lock::LockState state;
  state.name = std::move(name);
  state.type = rlock::lock::KeyType::hash;
  state.layout = rlock::lock::Layout::exclusive;
  state.ttl = Millis(29'500);
  state.owners = {{"c2748426-bd31-4962-a861-5482375f0102:25006", 1}};
  state.server_now_ms = k_now;
  state.record = rlock::lock::parse_holder_record(
      R"({"host":"build-7","pid":25008,"command":")" + command +
      R"(","acquired_at_ms":1700000000000,"renewed_at_ms":1700000090000,"ttl_ms":30000,"fence":1795489428207})");
  return state;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

} // namespace

TEST_CASE("status table: one row per lock with every column, fitting 80 columns") {
  auto text = status_table({rlock_state("nightly-backup", "backup.sh --full /srv/data /mnt/backup/nightly")},
                           TableStyle{80, false});
  auto lines = lines_of(text);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].starts_with("NAME"));
  for (const char* column : {"KIND", "N", "HELD", "TTL", "RENEWED", "W", "FENCE", "HOLDER"}) {
    CHECK(lines[0].find(column) != std::string::npos);
  }
  CHECK(lines[1].starts_with("nightly-backup  rlock"));
  CHECK(lines[1].find(" 1m40s ") != std::string::npos); // held: now - acquired_at
  CHECK(lines[1].find(" 29s ") != std::string::npos);   // TTL, whole seconds
  CHECK(lines[1].find(" 10s ago ") != std::string::npos);
  CHECK(lines[1].find("1795489428207") != std::string::npos);
  CHECK(lines[1].find("build-7:25008 backu") != std::string::npos);
  CHECK(lines[1].ends_with("…")); // the command was cut
  for (const auto& line : lines) {
    CHECK(display_width(line) <= 80);
  }
  CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("status table: wide enough, nothing is cut; narrow, names and holders are") {
  auto state = rlock_state("a-rather-long-lock-name-for-the-nightly-database-backup", "backup.sh");
  auto wide = lines_of(status_table({state}, TableStyle{200, false}));
  CHECK(wide[1].find("a-rather-long-lock-name-for-the-nightly-database-backup") != std::string::npos);
  CHECK(wide[1].ends_with("build-7:25008 backup.sh"));
  auto narrow = lines_of(status_table({state}, TableStyle{80, false}));
  CHECK(display_width(narrow[1]) <= 80);
  CHECK(narrow[1].starts_with("a-rather-long-lock-name-for-t…")); // the holder and fence gave way first
  CHECK(narrow[1].find(" …8207  build-7:250…") != std::string::npos);
}

// Issue 43: a name is never cut to "hm-back…" while a 13-digit fence keeps its
// full width: the holder gives way first, then the fence (keeping its last
// digits), and only then the name.
TEST_CASE("status table: the name keeps its width before the fence does") {
  auto state = rlock_state("hm-backup-nightly", "backup.sh");
  auto full = lines_of(status_table({state}, TableStyle{200, false}));
  CHECK(full[1].find(" 1795489428207  build-7:25008 backup.sh") != std::string::npos);
  auto at80 = lines_of(status_table({state}, TableStyle{80, false}));
  CHECK(at80[1].starts_with("hm-backup-nightly  rlock"));
  CHECK(at80[1].find(" 1795489428207  build-7:25008 ba…") != std::string::npos); // the holder gives way first
  auto lines = lines_of(status_table({state}, TableStyle{70, false}));
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].starts_with("hm-backup-nightly  rlock")); // whole
  CHECK(lines[1].find(" …9428207  build-7:250…") != std::string::npos);
  CHECK(lines[0].find("    FENCE  HOLDER") != std::string::npos);
  for (const auto& line : lines) {
    CHECK(display_width(line) <= 70);
  }
  // Narrower still: the fence down to its header's width, then the name.
  auto narrow = lines_of(status_table({state}, TableStyle{60, false}));
  CHECK(narrow[1].find(" …8207  build-7:250…") != std::string::npos);
  CHECK(narrow[1].starts_with("hm-backup…  rlock"));
  CHECK(display_width(narrow[1]) <= 60);
}

TEST_CASE("status table: a heartbeat that stopped and a lease without expiry are coloured, on request only") {
  auto stale = rlock_state("stale", "job");
  stale.server_now_ms = 1'700'000'090'000 + 25'000; // 25s after the last renewal of a 30s lease
  auto forever = rlock_state("forever", "job");
  forever.ttl = Millis(-1);
  auto plain = status_table({stale, forever}, TableStyle{80, false});
  CHECK(plain.find('\x1b') == std::string::npos);
  CHECK(plain.find("none") != std::string::npos);
  auto coloured = status_table({stale, forever}, TableStyle{80, true});
  CHECK(coloured.find("\x1b[1mNAME") != std::string::npos); // bold header
  CHECK(coloured.find("\x1b[33m") != std::string::npos);    // the stale renewal
  CHECK(coloured.find("\x1b[31m") != std::string::npos);    // no expiry
}

TEST_CASE("status table: kinds and rows of every layout, and what has no column under it") {
  rlock::lock::LockState redisson;
  redisson.name = "java";
  redisson.type = rlock::lock::KeyType::hash;
  redisson.layout = rlock::lock::Layout::exclusive;
  redisson.ttl = Millis(10'000);
  redisson.owners = {{"a0b1c2d3:57", 2}};

  rlock::lock::LockState foreign;
  foreign.name = "str";
  foreign.type = rlock::lock::KeyType::string;
  foreign.ttl = Millis(5'000);

  rlock::lock::LockState rw;
  rw.name = "rw";
  rw.type = rlock::lock::KeyType::hash;
  rw.layout = rlock::lock::Layout::read;
  rw.ttl = Millis(9'000);
  rw.owners = {{"r1", 1}, {"r2", 3}};
  rw.holders = {{"r1", 1, Millis(9'000), std::nullopt}, {"r2", 3, Millis(8'000), std::nullopt}};

  rlock::lock::LockState sem;
  sem.name = "pool";
  sem.type = rlock::lock::KeyType::string;
  sem.layout = rlock::lock::Layout::semaphore;
  sem.permits_free = 2;
  sem.holders = {{"p1", 1, Millis(4'000), std::nullopt}};

  rlock::lock::LockState fair = rlock_state("queue", "job");
  fair.layout = rlock::lock::Layout::fair;
  fair.waiters = {{"w1", Millis(7'000), std::nullopt, Millis(3'000)}, {"w2", std::nullopt, std::nullopt, std::nullopt}};

  rlock::lock::LockState free_state;
  free_state.name = "nothing";
  free_state.type = rlock::lock::KeyType::none;

  auto lines = lines_of(status_table({redisson, foreign, rw, sem, fair, free_state}, TableStyle{100, false}));
  auto row = [&](const std::string& start) {
    for (const auto& line : lines) {
      if (line.starts_with(start)) {
        return line;
      }
    }
    return std::string("(no row starting with " + start + ")");
  };
  CHECK(row("java ").find("redisson") != std::string::npos);
  CHECK(row("java ").ends_with("a0b1c2d3:57"));
  CHECK(row("str ").find("foreign") != std::string::npos);
  CHECK(row("rw ").find("read") != std::string::npos);
  CHECK(std::count_if(lines.begin(), lines.end(), [](const auto& l) { return l.starts_with("rw "); }) == 2);
  CHECK(row("pool ").find("permit") != std::string::npos);
  CHECK(row("queue ").find("fair") != std::string::npos);
  CHECK(row("nothing ").find("free") != std::string::npos);
  CHECK(row("queue: 2 waiting, in order: 1. w1 (for 3s) 2. w2") != "(no row starting with queue: 2 waiting, in order: 1. w1 (for 3s) 2. w2)");
  CHECK(row("pool: 2 permits free") == "pool: 2 permits free");
}

TEST_CASE("status table: locks asked for by name get everything known about them, uncut") {
  auto state = rlock_state("deploy", "a command far too long to fit in the eighty columns of the table at all");
  auto text = status_table({state}, TableStyle{80, false}, true);
  CHECK(text.find("cmd \"a command far too long to fit in the eighty columns of the table at all\"") !=
        std::string::npos);
  CHECK(text.find("c2748426-bd31-4962-a861-5482375f0102:25006") != std::string::npos);
}

TEST_CASE("status JSON has the server's clock when the lock was read") {
  auto state = rlock_state("x", "job");
  CHECK(rlock::cli::status_json(state)["server_time_ms"] == k_now);
  state.server_now_ms.reset();
  CHECK(rlock::cli::status_json(state)["server_time_ms"].is_null());
}

// Issue 19: alignment by display width, not code points.
TEST_CASE("display_width: East Asian wide characters and emoji take two columns, combining marks none") {
  CHECK(display_width("名前") == 4);
  CHECK(display_width("job-名前") == 8);
  CHECK(display_width("🔒") == 2);
  CHECK(display_width("e\u0301") == 1); // e + combining acute
  CHECK(display_width("ｆｕｌｌ") == 8);  // fullwidth Latin
  CHECK(rlock::cli::fit("名前名前", 5) == "名前…"); // a wide character is never split
  CHECK(display_width(rlock::cli::fit("名前名前", 5)) <= 5);
  CHECK(rlock::cli::fit("名前名前", 6) == "名前…");
  CHECK(rlock::cli::fit("名前名前", 8) == "名前名前");
}

TEST_CASE("status: columns line up by display width with wide names") {
  using rlock::lock::LockState;
  std::vector<LockState> states;
  for (const char* name : {"名前", "ab"}) {
    LockState state;
    state.name = name;
    state.type = rlock::lock::KeyType::hash;
    state.layout = rlock::lock::Layout::exclusive;
    state.ttl = rlock::Millis(30'000);
    state.owners = {{"tok", 1}};
    states.push_back(state);
  }
  auto table = rlock::cli::status_table(states, rlock::cli::TableStyle{200, false});
  std::vector<std::string> lines;
  std::string line;
  for (char c : table) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  REQUIRE(lines.size() >= 3);
  // Each row's KIND column starts at the header's: the same display width before it.
  auto before_kind = [](const std::string& row) {
    auto at = row.find("KIND") != std::string::npos ? row.find("KIND") : row.find("rlock");
    if (at == std::string::npos) {
      at = row.find("redisson");
    }
    return display_width(std::string_view(row).substr(0, at));
  };
  CHECK(before_kind(lines[1]) == before_kind(lines[0]));
  CHECK(before_kind(lines[2]) == before_kind(lines[0]));
}

TEST_CASE("fit and display_width count code points") {
  CHECK(display_width("häßlich") == 7);
  CHECK(rlock::cli::fit("häßlich", 7) == "häßlich");
  CHECK(rlock::cli::fit("häßlich", 4) == "häß…");
  CHECK(rlock::cli::fit("abc", 0).empty());
}

TEST_CASE("colour only on a terminal without NO_COLOR or TERM=dumb") {
  using rlock::cli::colour_wanted;
  CHECK(colour_wanted(true, nullptr, "xterm"));
  CHECK(colour_wanted(true, "", "xterm")); // NO_COLOR set but empty: not a request
  CHECK_FALSE(colour_wanted(true, "1", "xterm"));
  CHECK_FALSE(colour_wanted(true, nullptr, "dumb"));
  CHECK_FALSE(colour_wanted(false, nullptr, "xterm"));
}

TEST_CASE("table width: COLUMNS, else the terminal's, else (not a terminal) no limit") {
  using rlock::cli::table_width;
  // Off a terminal (issue 19): nothing is cut unless COLUMNS says so.
  CHECK(table_width(nullptr, std::nullopt) == rlock::cli::k_unlimited_width);
  CHECK(table_width("80", std::nullopt) == 80);
  CHECK(table_width(nullptr, 132) == 132);
  CHECK(table_width("100", 132) == 100);
  CHECK(table_width("abc", 132) == 132);
  CHECK(table_width("5", std::nullopt) == rlock::cli::k_unlimited_width);
  CHECK(table_width(nullptr, 10) == 80);
}

TEST_CASE("a watch frame is cut to the terminal's rows, saying what was cut") {
  using rlock::cli::cut_to_rows;
  std::string text = "title\n\nh\n1\n2\n3\n4\n5\n";
  CHECK(cut_to_rows(text, std::nullopt) == text);
  CHECK(cut_to_rows(text, 40) == text);
  auto cut = cut_to_rows(text, 5);
  CHECK(cut.starts_with("title\n\nh\n1\n"));
  CHECK(cut.find("… 4 more lines") != std::string::npos);
  CHECK(std::count(cut.begin(), cut.end(), '\n') == 4);
}

// Issue 43: a hold kept by run --hold-min after CMD ended is no heartbeat that
// stopped ("RENEWED 2m ago", in yellow): it is kept to its end, and says so.
TEST_CASE("status: a hold kept by --hold-min shows as kept to its end, not as a late renewal") {
  auto state = rlock_state("nightly", "backup.sh");
  state.record = rlock::lock::parse_holder_record(
      R"({"host":"build-7","pid":25008,"command":"backup.sh","acquired_at_ms":1700000000000,)"
      R"("renewed_at_ms":1700000010000,"kept_until_ms":1700000190000,"ttl_ms":30000,"fence":1})");
  auto lines = lines_of(status_table({state}, TableStyle{200, false}));
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].find(" hold-min 0 ") != std::string::npos);
  CHECK(lines[1].find(" ago ") == std::string::npos);
  CHECK(status_table({state}, TableStyle{200, true}).find("\x1b[33m") ==
        std::string::npos); // no warning tone
  auto line = rlock::cli::status_line(state);
  CHECK(line.find(", kept by --hold-min until 2023-11-14T22:16:30Z (CMD ended)") != std::string::npos);
  CHECK(line.find(", renewed ") == std::string::npos);
  auto doc = rlock::cli::status_json(state);
  CHECK(doc["holder"]["kept_until_ms"] == 1700000190000LL);
  CHECK(doc["holder"]["kept_until"] == "2023-11-14T22:16:30Z");
  // A renewal after it (a heartbeat) drops kept_until_ms: "ago" again.
  state.record->kept_until_ms.reset();
  CHECK(lines_of(status_table({state}, TableStyle{200, false}))[1].find(" 1m30s ago ") != std::string::npos);
}
