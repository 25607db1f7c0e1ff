# Sourced by bench/peers/* (POSIX sh). Each peer is called as
#   bench/peers/TOOL NAME -- CMD [ARGS...]
# waits for lock NAME without a time limit (or a very large one), runs CMD, releases,
# and exits with CMD's status.
#
# peer_args "$@"      checks the calling convention, sets PEER_NAME; the caller then
#                     does `shift 2` so that "$@" is CMD [ARGS...].
# peer_exec ARGV...   execs ARGV, or, when BENCH_ARGV_ONLY is set, prints ARGV
#                     NUL-separated and exits 0. bench/run uses the latter to spawn the
#                     tool itself, so that this shim's own shell start-up is not measured.
peer_args() {
  if [ $# -lt 3 ] || [ "$2" != "--" ] || [ -z "$1" ]; then
    echo "usage: $(basename "$0") NAME -- CMD [ARGS...]" >&2
    exit 64
  fi
  PEER_NAME=$1
}

peer_exec() {
  if [ -n "${BENCH_ARGV_ONLY:-}" ]; then
    printf '%s\0' "$@"
    exit 0
  fi
  exec "$@"
}

# The Redis the Redis-based peers use: REDIS_URL (redis://host:port[/db]), default local.
peer_redis_url() {
  echo "${REDIS_URL:-redis://127.0.0.1:6379}"
}
