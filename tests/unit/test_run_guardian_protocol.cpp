// The protocol between rlock and CMD's guardian (src/guardian/guardian.h):
// its one encoder and decoder of each message, as both sides use them.
#include <rlock/core/errors.hpp>

#include <guardian/guardian.h>

#include <doctest/doctest.h>

#include <csignal>
#include <cstring>
#include <string>

namespace {

guardian_state sample_state() {
  guardian_state state{};
  state.role = guardian_role_guardian;
  state.field[guardian_parent] = 4242;
  state.field[guardian_kill] = 1;
  state.field[guardian_exe] = 5;
  state.field[guardian_spec] = -1;
  state.field[guardian_report] = 7;
  state.field[guardian_go] = 8;
  state.field[guardian_death_signal] = SIGRTMIN + 1;
  state.field[guardian_image] = 9;
  return state;
}

bool decodes(const char* value) {
  guardian_state state{};
  return guardian_state_decode(value, &state) == 1;
}

} // namespace

TEST_CASE("guardian protocol: RLOCK_GUARDIAN's fields, in their order, encode and decode back") {
  auto state = sample_state();
  char out[128];
  auto n = guardian_state_encode(&state, out, sizeof out);
  REQUIRE(n > 0);
  const std::string expected = "G 4242 1 5 -1 7 8 " + std::to_string(SIGRTMIN + 1) + " 9";
  CHECK(std::string(out) == expected);
  CHECK(n == expected.size());
  guardian_state back{};
  REQUIRE(guardian_state_decode(out, &back) == 1);
  CHECK(back.role == guardian_role_guardian);
  for (int i = 0; i < guardian_fields; ++i) {
    CAPTURE(i);
    CHECK(back.field[i] == state.field[i]);
  }
  // The orphaned rlock reads the same numbers under its own role.
  out[0] = guardian_role_orphaned;
  REQUIRE(guardian_state_decode(out, &back) == 1);
  CHECK(back.role == guardian_role_orphaned);
  CHECK(back.field[guardian_spec] == -1);
  CHECK(back.field[guardian_go] == 8);
  // Too small a buffer: nothing written that could be read as a state.
  char small[10];
  CHECK(guardian_state_encode(&state, small, sizeof small) == 0);
  CHECK(guardian_state_encode(&state, small, 1) == 0);
}

TEST_CASE("guardian protocol: a malformed RLOCK_GUARDIAN is refused, never half read") {
  CHECK(decodes("G 1 1 5 -1 7 8 10 -1"));
  CHECK_FALSE(decodes(nullptr));
  CHECK_FALSE(decodes(""));
  CHECK_FALSE(decodes("X 1 1 5 -1 7 8 10 -1"));           // no such role
  CHECK_FALSE(decodes("G1 1 5 -1 7 8 10 -1"));            // no space after the role
  CHECK_FALSE(decodes("G 1 1 5 -1 7 8 10"));              // a field missing (an older guardian's state: no IMAGE_FD)
  CHECK_FALSE(decodes("G 1 1 5 -1 7 8 10 11 -1"));        // one too many
  CHECK_FALSE(decodes("G 1 1 5 -1 7 8 10 -1 "));          // trailing space
  CHECK_FALSE(decodes("G 1  1 5 -1 7 8 10 -1"));          // two spaces
  CHECK_FALSE(decodes("G 1 1 5 x 7 8 10 -1"));            // not a number
  CHECK_FALSE(decodes("G 1 1 5 - 7 8 10 -1"));            // a sign without digits
  CHECK_FALSE(decodes("G 12345678901 1 5 -1 7 8 10 -1")); // 11 digits
  CHECK(decodes("G 1234567890 1 5 -1 7 8 10 -1"));        // 10 are fine
  CHECK_FALSE(decodes("G 0 1 5 -1 7 8 10 -1"));           // no parent
  CHECK_FALSE(decodes("G 1 1 -1 -1 7 8 10 -1"));          // no program file
  CHECK_FALSE(decodes("G 1 1 5 -1 -1 8 10 -1"));          // no report pipe
  CHECK_FALSE(decodes("G 1 1 5 -1 7 -1 10 -1"));          // no go pipe
  CHECK_FALSE(decodes("G 1 1 5 -1 7 8 0 -1"));            // no death signal
  CHECK_FALSE(decodes("G 1 1 5 -1 7 8 65 -1"));           // not a signal
  // The orphaned role alone may say "no go came" (rlock died while it waited).
  CHECK(decodes("O 1 1 5 6 7 -1 10 -1"));
  CHECK_FALSE(decodes("O 1 1 5 6 7 -2 10 -1"));
  // The image the guardian was executed from: an fd, or -1 (none open).
  CHECK(decodes("G 1 1 5 -1 7 8 10 9"));
  CHECK_FALSE(decodes("G 1 1 5 -1 7 8 10 -2"));
}

TEST_CASE("guardian protocol: the go message") {
  guardian_go_message go{1, 0, 1234};
  std::int32_t wire[2];
  guardian_go_encode(&go, wire);
  CHECK(wire[0] == guardian_go_tty);
  CHECK(wire[1] == 1234);
  guardian_go_message back{};
  REQUIRE(guardian_go_decode(wire, &back) == 1);
  CHECK(back.tty == 1);
  CHECK(back.locked == 0);
  CHECK(back.env_size == 1234);
  go = {0, 1, 0};
  guardian_go_encode(&go, wire);
  CHECK(wire[0] == guardian_go_locked);
  REQUIRE(guardian_go_decode(wire, &back) == 1);
  CHECK(back.tty == 0);
  CHECK(back.locked == 1);
  // An environment size the guardian will not allocate.
  std::int32_t negative[2] = {guardian_go_locked, -1};
  CHECK(guardian_go_decode(negative, &back) == 0);
  std::int32_t huge[2] = {0, static_cast<std::int32_t>(guardian_go_max_env + 1)};
  CHECK(guardian_go_decode(huge, &back) == 0);
  std::int32_t largest[2] = {0, static_cast<std::int32_t>(guardian_go_max_env)};
  CHECK(guardian_go_decode(largest, &back) == 1);
  CHECK(back.cancel == 0);
  // The cancel: rlock ends without a go (its pipe closing alone is its death).
  go = {1, 1, 99, 1};
  guardian_go_encode(&go, wire);
  CHECK(wire[0] == guardian_go_cancel);
  CHECK(wire[1] == 0);
  REQUIRE(guardian_go_decode(wire, &back) == 1);
  CHECK(back.cancel == 1);
  std::int32_t cancel_and_go[2] = {guardian_go_cancel | guardian_go_locked, 0};
  CHECK(guardian_go_decode(cancel_and_go, &back) == 0);
  std::int32_t cancel_with_env[2] = {guardian_go_cancel, 8};
  CHECK(guardian_go_decode(cancel_with_env, &back) == 0);
}

TEST_CASE("guardian protocol: each report encodes and decodes; anything else is no report") {
  for (auto kind :
       {guardian_started, guardian_failed, guardian_stopped, guardian_exited, guardian_exited_last, guardian_keeper}) {
    CAPTURE(static_cast<int>(kind));
    guardian_event event{kind, 77};
    std::int32_t wire[2];
    guardian_report_encode(&event, wire);
    guardian_event back{};
    REQUIRE(guardian_report_decode(wire, &back) == 1);
    CHECK(back.kind == kind);
    CHECK(back.value == 77);
  }
  guardian_event back{};
  std::int32_t unknown[2] = {0, 1};
  CHECK(guardian_report_decode(unknown, &back) == 0);
  std::int32_t beyond[2] = {guardian_keeper + 1, 1};
  CHECK(guardian_report_decode(beyond, &back) == 0);
  std::int32_t no_pid[2] = {guardian_started, 0}; // CMD "runs" as no process
  CHECK(guardian_report_decode(no_pid, &back) == 0);
  std::int32_t no_keeper[2] = {guardian_keeper, -3}; // the keeper is no process
  CHECK(guardian_report_decode(no_keeper, &back) == 0);
}

TEST_CASE("guardian protocol: its exit codes are rlock's for the same outcomes") {
  CHECK(guardian_exit_software == static_cast<int>(rlock::ExitCode::software));
  CHECK(guardian_exit_not_found == static_cast<int>(rlock::ExitCode::not_found));
  CHECK(std::strcmp(GUARDIAN_ENV, "RLOCK_GUARDIAN") == 0);
}
