#!/usr/bin/env bash
# TLS (rediss://, rediss-sentinel://): certificates made here with openssl (a CA,
# a server certificate for 127.0.0.1 and localhost, a client certificate, an
# unrelated CA); redis-server with TLS only, without and with client
# certificates. Verification (system store, --tls-ca-file, names, IPs),
# --tls-insecure, client certificates, `run` handing the TLS settings on, waiting
# over TLS, no password anywhere, hostile servers over TLS (handshake stalls, a
# plain server, the reply caps), a Cluster and a Sentinel set over TLS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/topology.sh"
command -v openssl >/dev/null || { echo "FAIL: openssl is needed to make the test certificates"; exit 1; }
[ -x /usr/bin/time ] || { echo "FAIL: /usr/bin/time is needed to measure peak memory"; exit 1; }
unset RLOCK_PASSWORD REDISCLI_AUTH RLOCK_TLS_CA_FILE RLOCK_TLS_CERT RLOCK_TLS_KEY RLOCK_TLS_SERVER_NAME \
  RLOCK_TLS_INSECURE SSL_CERT_FILE SSL_CERT_DIR

# --- certificates (EC P-256: quick to make)
C=$TEST_TMP/certs
mkdir -p "$C"
mkcert() { # NAME SUBJECT EXTENSIONS: a key and a certificate signed by the test CA
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -keyout "$C/$1.key" \
    -out "$C/$1.csr" -subj "$2" 2>/dev/null &&
    printf '%b' "$3" >"$C/$1.ext" &&
    openssl x509 -req -in "$C/$1.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" -CAcreateserial -days 2 \
      -out "$C/$1.crt" -extfile "$C/$1.ext" 2>/dev/null
}
for ca in ca other-ca; do
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -keyout "$C/$ca.key" \
    -out "$C/$ca.crt" -days 2 -subj "/CN=rlock test $ca" 2>/dev/null ||
    { echo "FAIL: openssl could not make $ca"; exit 1; }
done
# the server certificate also serves as the client certificate of the cluster bus and replication
mkcert server "/CN=localhost" "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n" &&
  mkcert client "/CN=rlock client" "extendedKeyUsage=clientAuth\n" ||
  { echo "FAIL: openssl could not make the certificates"; exit 1; }
chmod 600 "$C"/*.key
SERVER_TLS=(--tls-cert-file "$C/server.crt" --tls-key-file "$C/server.key" --tls-ca-cert-file "$C/ca.crt")
CA=(--tls-ca-file "$C/ca.crt")
CLIENT=(--tls-cert "$C/client.crt" --tls-key "$C/client.key")

no_secret() { ! grep -qF -e s3cret -e wr0ngpw <<<"$OUT$ERR"; }
says() { grep -qF -- "$1" <<<"$ERR"; }

# --- server 1: TLS only, no client certificates, a password
P1=$(free_port)
REDIS_AUTH_ARGS="--tls --cacert $C/ca.crt -a s3cret --no-auth-warning"
start_redis_on "$P1" --port 0 --tls-port "$P1" "${SERVER_TLS[@]}" --tls-auth-clients no --requirepass s3cret
H1="127.0.0.1:$P1"
export RLOCK_URL="rediss://:s3cret@$H1"
echo "  TLS server on $H1"

r -v "${CA[@]}" acquire T --owner me
expect_rc 0 "--tls-ca-file: acquire"
check "-v names the TLS version and cipher" grep -qE "rediss://$H1: TLSv1\.[23] " <<<"$ERR"
check "-v of a TLS acquire never shows the password" no_secret
check "the lock is in Redis" test "$(rcli HGET T me)" = 1
r "${CA[@]}" status T
expect_rc 0 "--tls-ca-file: status"
check "status names the holder" grep -qF "held by me" <<<"$OUT"
r "${CA[@]}" status --json
expect_rc 0 "--tls-ca-file: status --json"
check "status --json parses" is_json "$OUT"
check "status --json shows no password" no_secret
r "${CA[@]}" release T --owner me
expect_rc 0 "--tls-ca-file: release"
check "released" key_gone T

RLOCK_TLS_CA_FILE=$C/ca.crt r acquire T2 --owner env -n
expect_rc 0 "RLOCK_TLS_CA_FILE instead of the flag"
r -u "rediss://:s3cret@localhost:$P1" "${CA[@]}" release T2 --owner env
expect_rc 0 "rediss://localhost: the certificate's DNS name"

# run: CMD gets RLOCK_URL with its scheme (no password) and the TLS settings,
# so a nested rlock (password from RLOCK_PASSWORD, which the user gave) works.
cd "$C" # a relative --tls-ca-file
RLOCK_PASSWORD=s3cret r -u "rediss://$H1" --tls-ca-file ca.crt run R -- sh -c '
  env | grep "^RLOCK_" | sort >"$1/child.env"
  "$2" status R >"$1/nested.out" 2>&1' sh "$TEST_TMP" "$RLOCK"
cd - >/dev/null
expect_rc 0 "run over TLS"
check "CMD's RLOCK_URL keeps rediss://" grep -qx "RLOCK_URL=rediss://$H1" "$TEST_TMP/child.env"
check "CMD's RLOCK_TLS_CA_FILE is made absolute" grep -qx "RLOCK_TLS_CA_FILE=$C/ca.crt" "$TEST_TMP/child.env"
check "CMD's environment has no password from rlock" bash -c '! grep -v "^RLOCK_PASSWORD=" "$1" | grep -qF s3cret' _ "$TEST_TMP/child.env"
check "a nested rlock inside CMD reads the lock over TLS" grep -qF "R: held by" "$TEST_TMP/nested.out"
check "run released" key_gone R
r "${CA[@]}" run R2 -- sh -c 'env | grep "^RLOCK_URL="'
expect_rc 0 "run with the password in the URL"
check "CMD's RLOCK_URL has no password" test "$OUT" = "RLOCK_URL=rediss://$H1"
# The renewal thread has a TLS connection of its own (renewals every TTL/3; its
# first handshake must end within the lease: under emulation, ./dev test --arch
# arm64, on a busy machine, a 600ms lease was too short for it; and a 1.5s lease
# was lost once when a loaded machine (load 9 on 2 cores) kept the renewal
# thread from running for a second: a 3s lease has room for that).
r -v "${CA[@]}" run R3 --ttl 3s -- sleep 3.6
expect_rc 0 "run over TLS with renewals"
check "the lease was renewed over TLS (at least 3 renewals)" test "$(grep -c '> EVALSHA .* R3 ' <<<"$ERR")" -ge 4
check "-v of the renewals never shows the password" no_secret

# waiting over TLS: the release message arrives on a TLS subscription
r "${CA[@]}" acquire W --owner holder
bg "$TEST_TMP/w" -u "$RLOCK_URL" "${CA[@]}" acquire W -w 20s --owner waiter
wait_until 5 has_sub W
t0=$(ms)
r "${CA[@]}" release W --owner holder
check "the waiter wakes on the release message" wait_until 5 bg_done "$TEST_TMP/w"
echo "  waiter took the lock $(( $(bg_t "$TEST_TMP/w") - t0 ))ms after the release"
check "the waiter got the lock (rc $(bg_rc "$TEST_TMP/w"))" test "$(bg_rc "$TEST_TMP/w")" = 0
check "... at the release, not the lease end or -w 20s (< 1000ms + SLACK_MS)" test $(( $(bg_t "$TEST_TMP/w") - t0 )) -lt $(( 1000 + SLACK_MS ))
r "${CA[@]}" release W --owner waiter

# --- verification failures: 69, one line, OpenSSL's reason
r -v acquire V
expect_rc 69 "the system's trust store does not know the test CA"
check "says the certificate is not trusted" says "TLS handshake failed: certificate verify failed ("
check "one error line (with -v)" bash -c '[ "$(grep -c "^rlock: acquire" <<<"$1")" = 1 ]' _ "$ERR"
check "no password in the -v log of a failed handshake" no_secret
echo "  $(grep '^rlock: acquire' <<<"$ERR")"
r --tls-ca-file "$C/other-ca.crt" acquire V
expect_rc 69 "an unrelated CA"
check "unrelated CA: certificate verify failed" says "certificate verify failed"
check "unrelated CA: one error line" one_err_line
check "unrelated CA: names the endpoint" says "on rediss://$H1:"
r "${CA[@]}" --tls-server-name redis.example acquire V
expect_rc 69 "--tls-server-name the certificate does not carry"
check "wrong name: hostname mismatch" says "(hostname mismatch)"
echo "  $ERR"
r "${CA[@]}" --tls-server-name 127.0.0.2 acquire V
expect_rc 69 "--tls-server-name an IP the certificate does not carry"
check "wrong IP: IP address mismatch" says "(IP address mismatch)"
r "${CA[@]}" --tls-server-name localhost acquire V --owner sn
expect_rc 0 "--tls-server-name localhost (a DNS name of the certificate) at 127.0.0.1"
r "${CA[@]}" release V --owner sn
check "nothing was written by the failed handshakes" test "$(rcli EXISTS V)" = 0

# --- --tls-insecure: works, says so once
r --tls-insecure acquire I --owner ins
expect_rc 0 "--tls-insecure without a CA"
check "warns exactly once" test "$ERR" = "rlock: warning: --tls-insecure: the server's certificate is not verified"
RLOCK_OWNER=ins r --tls-insecure --tls-ca-file "$C/other-ca.crt" run I -- true
expect_rc 0 "--tls-insecure run (re-entry) with an unrelated CA"
check "run warns exactly once" test "$(grep -c warning <<<"$ERR")" = 1
RLOCK_TLS_INSECURE=1 r -q release I --owner ins
expect_rc 0 "RLOCK_TLS_INSECURE=1, -q: no warning"
check "-q: nothing on stderr" test -z "$ERR"

# --- wrong password over TLS: 77, never shown
r -v -u "rediss://:wr0ngpw@$H1" "${CA[@]}" acquire P
expect_rc 77 "wrong password over TLS"
check "wrong password never shown (-v)" no_secret
r -u "rediss://$H1" "${CA[@]}" acquire P
expect_rc 77 "no password over TLS"

# --- usage errors
r -u "rediss://$H1" --tls-ca-file "$C/missing.crt" acquire U
expect_rc 64 "a missing CA file"
check "names the flag and the file" says "--tls-ca-file: $C/missing.crt: cannot read it"
r -u "rediss://$H1" --tls-ca-file "$C/server.key" acquire U
expect_rc 64 "a CA file without certificates"
check "says so" says "--tls-ca-file: $C/server.key: no CA certificate in it"
r -u "rediss://$H1" --tls-ca-file "$C" acquire U
expect_rc 64 "a directory as CA file"
r -u "rediss://$H1" "${CA[@]}" --tls-cert "$C/client.crt" --tls-key "$C/other-ca.key" acquire U
expect_rc 64 "a key that is not the certificate's"
check "names --tls-key" says "--tls-key: $C/other-ca.key: is not the key of the certificate"
r -u "rediss://$H1" "${CA[@]}" --tls-cert "$C/client.crt" acquire U
expect_rc 64 "--tls-cert without --tls-key"
r -u "redis://127.0.0.1:$P1" "${CA[@]}" acquire U
expect_rc 64 "--tls-ca-file with a redis:// URL"
check "says no URL uses TLS" says "no URL uses TLS"
r -u "redis://127.0.0.1:$P1" --tls-insecure acquire U
expect_rc 64 "--tls-insecure with a redis:// URL"
RLOCK_TLS_CA_FILE=$C/missing.crt r -u "redis://127.0.0.1:$P1" --connect-timeout 500ms acquire U
check "RLOCK_TLS_* are ignored for a redis:// URL (got $RC, not 64)" test "$RC" != 64
echo "  redis:// against the TLS port: rc $RC: $ERR"
check "plain redis:// against a TLS port: 69" test "$RC" = 69

# --- server 2: client certificates required
P2=$(free_port)
REDIS_AUTH_ARGS="--tls --cacert $C/ca.crt --cert $C/client.crt --key $C/client.key"
start_redis_on "$P2" --port 0 --tls-port "$P2" "${SERVER_TLS[@]}" --tls-auth-clients yes
export RLOCK_URL="rediss://127.0.0.1:$P2"
r "${CA[@]}" "${CLIENT[@]}" acquire K --owner kc
expect_rc 0 "client certificate: acquire"
r "${CA[@]}" acquire K2
expect_rc 69 "no client certificate: refused"
check "says the server wants a client certificate" says "certificate required"
check "... and how to give one" says "--tls-cert"
check "no client certificate: one error line" one_err_line
echo "  $ERR"
cd "$C"
RLOCK_OWNER=kc r --tls-ca-file ca.crt --tls-cert client.crt --tls-key client.key run K -- \
  sh -c '"$1" status K >"$2/nested2.out" 2>&1' sh "$RLOCK" "$TEST_TMP"
cd - >/dev/null
expect_rc 0 "client certificate: run (re-entry)"
check "a nested rlock inside CMD uses the client certificate too" grep -qF "K: held by kc" "$TEST_TMP/nested2.out"
RLOCK_TLS_CA_FILE=$C/ca.crt RLOCK_TLS_CERT=$C/client.crt RLOCK_TLS_KEY=$C/client.key r release K --owner kc
expect_rc 0 "client certificate from RLOCK_TLS_CERT / RLOCK_TLS_KEY"
check "released" test "$(rcli EXISTS K)" = 0

# --- hostile: a plain server, a handshake that stalls, misbehaviour inside TLS
PP=$(free_port)
redis-server --port "$PP" --bind 127.0.0.1 --save '' --appendonly no --dir "$TEST_TMP" >"$TEST_TMP/plain.log" 2>&1 &
_pids+=($!)
wait_until 5 bash -c '[ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ]' _ "$PP" || { echo "FAIL: plain redis-server"; exit 1; }
t0=$(ms)
r -u "rediss://127.0.0.1:$PP" "${CA[@]}" --connect-timeout 1s acquire H
D=$(($(ms) - t0))
echo "  rediss:// to a plain server: rc $RC after ${D}ms: $ERR"
expect_rc 69 "rediss:// to a plain redis-server"
check "plain server: within the 1s connect timeout (${D}ms < 1000ms + SLACK_MS)" test "$D" -lt $(( 1000 + SLACK_MS ))
check "plain server: one error line" one_err_line

HOSTILE_URL_SCHEME=rediss HOSTILE_RLOCK_ARGS=("${CA[@]}")
. "$(dirname "$0")/hostile_helpers.sh"
# A server that accepts and reads the ClientHello but never answers it.
hr silent --connect-timeout 1s --io-timeout 5s acquire H
clean 69 2000 "a handshake that stalls, --connect-timeout 1s"
check "stall: waited for the connect timeout (${D}ms >= 900)" test "$D" -ge 900
check "stall: 'TLS handshake timed out after 1s (--connect-timeout)'" says "TLS handshake timed out after 1s (--connect-timeout)"

export HOSTILE_TLS_CERT=$C/server.crt HOSTILE_TLS_KEY=$C/server.key
hr stream --io-timeout 1s acquire H
clean 69 2500 "TLS: endless status line, acquire --io-timeout 1s"
check "TLS stream: the message names --io-timeout" says "--io-timeout"
hr stream-array --io-timeout 1s acquire H
clean 69 2500 "TLS: endless slow array, acquire --io-timeout 1s"
# 64 MiB decrypted before the cap refuses it: the request's own deadline scales
# as the time bound does (TIME_SCALE: a sanitizer build under load took over 5s).
hr bigbulk --io-timeout $(( 5 * TIME_SCALE ))s acquire H
clean 70 4000 "TLS: \$9000000000 bulk, acquire"
check "TLS bulk: 'reply too large (over 64 MiB)'" says "reply too large (over 64 MiB)"
hr nested --io-timeout $(( 5 * TIME_SCALE ))s acquire H
clean 70 4000 "TLS: endless array of small arrays, acquire"
hr garbage --io-timeout 1s acquire H
clean 70 2500 "TLS: garbage bytes, acquire"
hr silent --io-timeout 1s acquire H
clean 69 2500 "TLS: a server that never answers, acquire --io-timeout 1s"
check "TLS silent: 'no reply within 1s (--io-timeout)'" says "no reply within 1s (--io-timeout)"
hr close-mid --io-timeout 1s acquire H
clean 69 2500 "TLS: a server that closes mid-reply, acquire"
hr pubsub --io-timeout 1s -q acquire H -w 2s # -q: the error line alone (test_run_wait_lines.sh: the waiting lines)
clean 75 4500 "TLS: endless bulk on the subscription, acquire -w 2s"
unset HOSTILE_TLS_CERT HOSTILE_TLS_KEY

# --- a Cluster and a Sentinel set over TLS (every node reached with the same settings)
unset REDIS_AUTH_ARGS
topo_use_tls "$C/ca.crt" "$C/server.crt" "$C/server.key"
start_cluster
export RLOCK_URL=$CLUSTER_URL
names=()
for p in "${CLUSTER_PORTS[@]}"; do names+=("$(name_on_port "$p" tls)"); done
ok=0
for n in "${names[@]}"; do
  r "${CA[@]}" acquire "$n" --owner c && [ "$(ccli "$(node_of_name "$n")" HGET "$n" c)" = 1 ] && ok=$((ok + 1))
done
check "rediss:// Cluster: a lock on each of the 3 primaries (${names[*]}: $ok)" test "$ok" = 3
r "${CA[@]}" status
expect_rc 0 "rediss:// Cluster: status scans every primary"
check "status lists the 3 locks" test "$(grep -cE '^[^ ]+ +rlock ' <<<"$OUT")" = 3
RLOCK_OWNER=c r "${CA[@]}" run "${names[0]}" -- true
expect_rc 0 "rediss:// Cluster: run (re-entry)"
for n in "${names[@]}"; do r "${CA[@]}" release "$n" --owner c; done
expect_rc 0 "rediss:// Cluster: release"
r acquire "${names[0]}"
expect_rc 69 "rediss:// Cluster without the CA: 69"
# rediss-cluster:// (issue 33): the seeds tried in turn, the first one down
SEEDS="rediss-cluster://127.0.0.1:$(free_port),127.0.0.1:${CLUSTER_PORTS[1]},127.0.0.1:${CLUSTER_PORTS[2]}"
r "${CA[@]}" -u "$SEEDS" acquire "${names[0]}" --owner s
expect_rc 0 "rediss-cluster:// with the first seed down: acquire"
check "... on the primary serving it" test "$(ccli "$(node_of_name "${names[0]}")" HGET "${names[0]}" s)" = 1
r "${CA[@]}" -u "$SEEDS" release "${names[0]}" --owner s
expect_rc 0 "rediss-cluster://: release"
r -u "$SEEDS" status
expect_rc 69 "rediss-cluster:// without the CA: 69"

start_sentinel_set
export RLOCK_URL=$SENTINEL_URL
r -v "${CA[@]}" acquire S --owner s
expect_rc 0 "rediss-sentinel://: acquire on the primary the sentinels name"
check "the lock is on the primary" test "$(ccli "$PRIMARY_PORT" HGET S s)" = 1
check "sentinels and primary were reached over TLS" test "$(grep -c ': TLSv1' <<<"$ERR")" -ge 2
RLOCK_OWNER=s r "${CA[@]}" run S -- true
expect_rc 0 "rediss-sentinel://: run (re-entry)"
r "${CA[@]}" release S --owner s
expect_rc 0 "rediss-sentinel://: release"
r acquire S
expect_rc 69 "rediss-sentinel:// without the CA: 69"
check "says no primary, with the certificate problem" says "certificate verify failed"

finish
