#!/usr/bin/env bash
# Lua scripts: EVALSHA of the embedded lua/*.lua (as assembled with lua/lib/),
# reloaded after SCRIPT FLUSH (NOSCRIPT).
. "$(dirname "$0")/lib.sh"
start_redis
SRC=${RLOCK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}

# --- the assembled scripts ($RLOCK_LUA, next to the binary): one per lua/*.lua
# (none for lua/lib/*.lua), each its source with every `-- @include NAME.lua`
# line replaced by lua/lib/NAME.lua (included once per script, its own includes
# likewise), then on its diet (cmake/embed_lua.cmake): without the top-level
# `local function`s whose name appears nowhere else in what is kept (comment
# lines aside), with the comment lines just above each, and without full-line
# comments; byte for byte; no include line is left, no function kept that
# nothing names, none dropped that anything names
assembly=$(python3 - "$SRC/lua" "$RLOCK_LUA" <<'PY'
import glob, os, re, sys
src, built = sys.argv[1], sys.argv[2]
def assemble(path, included):
    out = b''
    for line in open(path, 'rb').read().splitlines(keepends=True):
        m = re.match(rb'-- @include ([A-Za-z0-9_]+\.lua)[ \t]*\n?$', line)
        if not m:
            out += line
        elif m.group(1) not in included:
            included.add(m.group(1))
            out += assemble(os.path.join(src, 'lib', m.group(1).decode()), included)
    return out
COMMENT = re.compile(rb'\n[ \t]*--[^\n]*')
def word(name):
    return re.compile(rb'(?<![A-Za-z0-9_])' + re.escape(name) + rb'(?![A-Za-z0-9_])')
def diet(text):
    lines = (b'\n' + text).split(b'\n')[1:]
    pieces, code, i = [], [], 0   # (name or None, lines)
    while i < len(lines):
        m = re.match(rb'local function ([A-Za-z_][A-Za-z0-9_]*)\(', lines[i])
        if not m:
            code.append(lines[i])
            i += 1
            continue
        k = len(code)
        while k > 0 and re.match(rb'[ \t]*--', code[k - 1]):
            k -= 1
        pieces.append((None, code[:k]))
        j = lines.index(b'end', i)
        pieces.append((m.group(1), code[k:] + lines[i:j + 1]))
        code, i = [], j + 1
    pieces.append((None, code))
    kept = [name is None for name, _ in pieces]
    changed = True
    while changed:
        changed = False
        seen = COMMENT.sub(b'', b'\n' + b'\n'.join(b'\n'.join(p) for (_, p), k in zip(pieces, kept) if k) + b'\n')
        for n, (name, _) in enumerate(pieces):
            if not kept[n] and word(name).search(seen):
                kept[n] = changed = True
    out = b'\n'.join(b'\n'.join(p) for (_, p), k in zip(pieces, kept) if k and p)
    out = COMMENT.sub(b'', b'\n' + out)[1:]
    dropped = [name for (name, _), k in zip(pieces, kept) if not k]
    return out, dropped
names = sorted(os.path.basename(f) for f in glob.glob(os.path.join(src, '*.lua')))
found = sorted(os.path.basename(f) for f in glob.glob(os.path.join(built, '*.lua')))
if names != found:
    print('scripts %s, assembled %s' % (names, found))
for name in names:
    text = open(os.path.join(built, name), 'rb').read() if name in found else b''
    expected, dropped = diet(assemble(os.path.join(src, name), set()))
    if text != expected:
        print('%s differs' % name)
    for fn in dropped:
        if word(fn).search(text):
            print('%s names %s, which it does not define' % (name, fn.decode()))
    if re.search(rb'(^|\n)[ \t]*--', text):
        print('%s keeps a comment line' % name)
    if re.search(rb'(^|\n)-- @include', text):
        print('%s keeps an include line' % name)
PY
)
check "every lua/*.lua is assembled into $RLOCK_LUA exactly (${assembly:-ok})" test -z "$assembly"
check "the library files are included (acquire.lua holds lib/fair_queue.lua's survey)" \
  grep -q '^local function survey(now_ms)$' "$RLOCK_LUA/acquire.lua"

# --- the SHA the binary sends equals SCRIPT LOAD of the assembled <script>.lua
# (the file byte for byte: redis-cli -x, since "$(cat f)" would drop the final newline)
r -v acquire S --owner o
expect_rc 0 "acquire -v"
sha_bin=$(grep -o '> EVALSHA [0-9a-f]\{40\}' <<<"$ERR" | head -1 | awk '{print $3}')
sha_srv=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/acquire.lua")
echo "  acquire: binary $sha_bin, SCRIPT LOAD $sha_srv"
check "-v logs '> EVALSHA <sha>'" test -n "$sha_bin"
check "acquire SHA equals SCRIPT LOAD of the assembled acquire.lua" test "$sha_bin" = "$sha_srv"
check "acquire SHA equals sha1 of the assembled acquire.lua" test "$sha_bin" = "$(sha1sum <"$RLOCK_LUA/acquire.lua" | cut -c1-40)"

for op in renew release; do
  r -v "$op" S --owner o
  sha_bin=$(grep -o '> EVALSHA [0-9a-f]\{40\}' <<<"$ERR" | head -1 | awk '{print $3}')
  sha_srv=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/$op.lua")
  echo "  $op: binary $sha_bin, SCRIPT LOAD $sha_srv"
  check "$op SHA equals SCRIPT LOAD of the assembled $op.lua" test -n "$sha_bin" -a "$sha_bin" = "$sha_srv"
done
r acquire S2
r -v force-unlock S2
sha_bin=$(grep -o '> EVALSHA [0-9a-f]\{40\}' <<<"$ERR" | tail -1 | awk '{print $3}')
sha_srv=$(rcli -x SCRIPT LOAD <"$RLOCK_LUA/force_unlock.lua")
check "force-unlock SHA equals SCRIPT LOAD of the assembled force_unlock.lua" test -n "$sha_bin" -a "$sha_bin" = "$sha_srv"

# --- SCRIPT FLUSH between calls: NOSCRIPT, load, retry once
rcli SCRIPT FLUSH >/dev/null
r -v acquire S --owner p
expect_rc 0 "acquire after SCRIPT FLUSH"
check "the lock was taken after the flush" test "$(rcli HGET S p)" = 1
check "acquire reloaded the script (SCRIPT LOAD seen in -v)" grep -q 'SCRIPT LOAD' <<<"$ERR"
check "acquire after flush counted once (not twice by the retry)" test "$(rcli HGET S p)" = 1
check "no rlock: error line for the NOSCRIPT recovery" bash -c '! grep -v "^rlock: [0-9:.]* [<>]" <<<"$1" | grep -qi "error:\|failed"' _ "$ERR"

rcli SCRIPT FLUSH >/dev/null
r renew S --owner p --ttl 50s
expect_rc 0 "renew after SCRIPT FLUSH"
p=$(rcli PTTL S); check "renew after flush applied (PTTL $p)" test "$p" -gt 49000

rcli SCRIPT FLUSH >/dev/null
r acquire S --owner p
expect_rc 0 "re-enter after SCRIPT FLUSH"
check "re-entry after flush counted once (count 2)" test "$(rcli HGET S p)" = 2

rcli SCRIPT FLUSH >/dev/null
r release S --owner p
expect_rc 0 "release after SCRIPT FLUSH"
check "release after flush undid exactly one level" test "$(rcli HGET S p)" = 1

rcli SCRIPT FLUSH >/dev/null
r release S --owner p
expect_rc 0 "final release after SCRIPT FLUSH"
check "lock gone" test "$(rcli EXISTS S)" = 0

rcli SCRIPT FLUSH >/dev/null
r status S
expect_rc 1 "status of the free lock after SCRIPT FLUSH"

rcli SET S3 x >/dev/null
rcli SCRIPT FLUSH >/dev/null
r force-unlock S3
expect_rc 0 "force-unlock after SCRIPT FLUSH"
check "force-unlock removed the key" test "$(rcli EXISTS S3)" = 0

# --- no script text is built from user input: a name that looks like Lua
evil="x') redis.call('FLUSHALL') --"
rcli SET canary 1 >/dev/null
r acquire "$evil"
expect_rc 0 "acquire a Lua-looking name"
check "the canary key survived" test "$(rcli GET canary)" = 1
check "the Lua-looking name is a plain key" test "$(rcli TYPE "$evil")" = hash

finish
