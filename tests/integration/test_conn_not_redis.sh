#!/usr/bin/env bash
# A URL that reaches something other than a plain Redis (issue 43): a
# listener that is not Redis (its first answer is not Redis's protocol) is
# unavailable, 69, "not a Redis server", so `run --if-unavailable` runs or
# skips as it says; plain redis:// to a Redis TLS port says to try rediss://.
# A Redis that answered once and then sends garbage stays 70
# (test_conn_hostile.sh).
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || { echo "FAIL: openssl is needed to make the test certificate"; exit 1; }
says() { grep -qF -- "$1" <<<"$ERR"; }

# --- not Redis: an HTTP server's answer
HTTP_PORT=$(free_port)
"$PY" - "$HTTP_PORT" <<'PY' &
import socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
def serve(conn):
    try:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        time.sleep(5)
    except OSError:
        pass
    conn.close()
end = time.time() + 120
s.settimeout(1)
while time.time() < end:
    try:
        conn, _ = s.accept()
    except socket.timeout:
        continue
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
_pids+=($!)
check "the HTTP listener is up" wait_until 10 eval "(exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT) 2>/dev/null"
export RLOCK_URL="redis://127.0.0.1:$HTTP_PORT"
r acquire N
expect_rc 69 "acquire on an HTTP server: unavailable"
check "it says: not a Redis server ($ERR)" says "not a Redis server: its first answer is not Redis's protocol"
check "one error line" one_err_line
r run N -- true
expect_rc 69 "run on an HTTP server (--if-unavailable fail)"
r run --if-unavailable run N -- sh -c 'echo "ran unlocked=$RLOCK_UNLOCKED"'
expect_rc 0 "--if-unavailable run: CMD runs"
check "CMD ran without the lock ($OUT)" test "$OUT" = "ran unlocked=1"
r run --if-unavailable skip N -- sh -c 'echo ran'
expect_rc 0 "--if-unavailable skip: exits 0"
check "CMD did not run" test -z "$OUT"
check "the skip's warning says why" says "not a Redis server"

# --- plain redis:// to a Redis TLS port
C=$TEST_TMP/certs
mkdir -p "$C"
openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -keyout "$C/server.key" \
  -out "$C/server.crt" -days 2 -subj "/CN=localhost" -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null ||
  { echo "FAIL: openssl could not make the certificate"; exit 1; }
chmod 600 "$C/server.key"
TLS_PORT=$(free_port)
REDIS_AUTH_ARGS="--tls --cacert $C/server.crt"
start_redis_on "$TLS_PORT" --port 0 --tls-port "$TLS_PORT" --tls-cert-file "$C/server.crt" \
  --tls-key-file "$C/server.key" --tls-ca-cert-file "$C/server.crt" --tls-auth-clients no
r -u "redis://127.0.0.1:$TLS_PORT" acquire N
expect_rc 69 "plain redis:// to a TLS port"
check "it says to use rediss:// ($ERR)" says "if that port speaks TLS, use rediss://"
check "one error line" one_err_line
r -u "rediss://127.0.0.1:$TLS_PORT" --tls-ca-file "$C/server.crt" acquire N --owner tok
expect_rc 0 "rediss:// to the same port takes the lock"
finish
