#include <rlock/core/errors.hpp>
#include <rlock/redis/tls.hpp>

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using rlock::redis::TlsOptions;

namespace {
// The message of the bad-setting error (exit 64, as a usage error) that
// making a context for `options` throws.
std::string usage_error_of(const TlsOptions& options) {
  try {
    rlock::redis::TlsContext context(options);
  } catch (const rlock::Error& e) {
    if (e.outcome() != rlock::Outcome::bad_setting) {
      return std::string("(another error: ") + e.what() + ")";
    }
    return e.what();
  }
  return "(no usage error)";
}
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
} // namespace

TEST_CASE("tls: unusable files are usage errors naming the flag and the file") {
  std::string dir = "/tmp/rlock-unit-tls-" + std::to_string(getpid());
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  std::string empty = dir + "/empty.pem";
  std::ofstream(empty).close();
  std::string junk = dir + "/junk.pem";
  std::ofstream(junk) << "not a certificate\n";

  TlsOptions options;
  options.ca_file = dir + "/missing.pem";
  auto why = usage_error_of(options);
  CHECK(contains(why, "--tls-ca-file: " + options.ca_file + ": cannot read it: No such file or directory"));
  options.ca_file = dir;
  CHECK(contains(usage_error_of(options), "--tls-ca-file: " + dir + ": is a directory"));
  options.ca_file = empty;
  CHECK(contains(usage_error_of(options), "--tls-ca-file: " + empty + ": no CA certificate in it"));
  options.ca_file = junk;
  CHECK(contains(usage_error_of(options), "--tls-ca-file: " + junk + ": no CA certificate in it"));

  options = {};
  options.cert = junk;
  options.key = junk;
  CHECK(contains(usage_error_of(options), "--tls-cert: " + junk + ": no certificate in it"));
  options.cert = dir + "/missing.pem";
  CHECK(contains(usage_error_of(options), "--tls-cert: " + options.cert + ": cannot read it"));

  // --tls-insecure skips the trust store, not the client certificate.
  options = {};
  options.insecure = true;
  options.ca_file = dir + "/missing.pem"; // not read: nothing is verified
  CHECK(usage_error_of(options) == "(no usage error)");
  options.cert = junk;
  options.key = junk;
  CHECK(contains(usage_error_of(options), "--tls-cert: "));

  std::remove(empty.c_str());
  std::remove(junk.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("tls: one context per process for the same files, whatever the server name") {
  TlsOptions a;
  a.insecure = true;
  TlsOptions b = a;
  b.server_name = "redis.example";
  auto first = rlock::redis::tls_context(a);
  CHECK(first == rlock::redis::tls_context(b));
  CHECK(first->options().server_name.empty());
  TlsOptions c = a;
  c.insecure = false; // the system's trust store
  CHECK(first != rlock::redis::tls_context(c));
}
