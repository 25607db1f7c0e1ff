#pragma once

// `status --format openmetrics` and its --output: the Prometheus text of the
// locks, and writing a file atomically.

#include <rlock/lock/lock.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace rlock::cli {

// `status --format openmetrics`: the locks as the Prometheus text exposition
// format (version 0.0.4, what `promtool check metrics` and node_exporter's
// textfile collector read): only gauges, each family with its HELP and TYPE
// lines, label values as metric_label_value makes them, each name once (a
// series twice makes node_exporter reject the file), ending with "# EOF" (a
// comment to that format; the end marker OpenMetrics asks for). Pure.
std::string openmetrics_text(const std::vector<lock::LockState>& states);

// A label value as the text format wants it, one per name: the name with each
// backslash doubled and each byte that is not UTF-8 written as the text \xNN
// (so distinct names give distinct labels), then backslash, double quote and
// newline escaped for the format. Pure.
std::string metric_label_value(std::string_view bytes);

// Writes `text` to `path` atomically: a temp file in the same directory
// (".NAME.XXXXXX", which the textfile collector does not read, as it reads
// only *.prom), written, flushed to disk and made readable (0644 less the
// umask), then renamed over `path`. A reader sees the old file or the new one,
// never a part. Throws rlock::Error naming the file when it cannot: 64
// (Outcome::bad_setting) when the path is the reason (a directory that does not
// exist or may not be written, a directory given as the file), else 70.
void write_file_atomically(const std::string& path, std::string_view text);

} // namespace rlock::cli
