#!/usr/bin/env python3
"""emulated.py QEMU CMD [ARG...]: runs CMD where this machine executes arm64
(aarch64) programs under qemu-user, without changing the machine for anyone
else: in a user namespace of its own (every uid and gid mapped to itself, so
files keep their owners and root stays root), with a mount namespace whose
binfmt_misc (Linux >= 6.7 gives each user namespace its own) sends aarch64 ELF
files to the emulator of QEMU, a root holding Debian's qemu-user-static (its
usr/lib/binfmt.d/qemu-aarch64.conf, whose interpreter is taken inside QEMU;
tests/arm64/roots.sh, arm64_qemu). Everything CMD starts inherits it; the
registration ends with the namespace, when the last of them exits. Needs root.
Exits with CMD's status."""
import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
BINFMT = "/proc/sys/fs/binfmt_misc"
RULE = "usr/lib/binfmt.d/qemu-aarch64.conf"  # in qemu-user-static


def fail(message):
    sys.stderr.write(f"emulated.py: {message}\n")
    sys.exit(70)


def main():
    if len(sys.argv) < 3:
        fail("usage: emulated.py QEMU CMD [ARG...]")
    if os.geteuid() != 0:
        fail("needs root (it maps every uid of this machine into its namespace)")
    qemu = os.path.abspath(sys.argv[1])
    try:
        with open(os.path.join(qemu, RULE)) as f:
            # :name:type:offset:magic:mask:interpreter:flags
            fields = f.read().strip().split(":")
    except OSError as e:
        fail(f"{qemu}/{RULE}: {e.strerror}")
    if len(fields) != 8 or not fields[6].startswith("/"):
        fail(f"{qemu}/{RULE}: not a binfmt_misc rule")
    fields[6] = qemu + fields[6]
    rule = ":".join(fields)
    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            fail(f"unshare: {os.strerror(ctypes.get_errno())}")
        os.write(ready_w, b"u")
        if os.read(go_r, 1) != b"g":
            os._exit(70)  # the maps could not be written: said above
        try:
            # Capabilities in the new namespace need a uid in it.
            os.setgid(0)
            os.setuid(0)
            if libc.mount(b"binfmt_misc", BINFMT.encode(), b"binfmt_misc", 0, None) != 0:
                fail(f"mounting binfmt_misc in a user namespace: {os.strerror(ctypes.get_errno())} "
                     "(Linux >= 6.7 needed)")
            with open(f"{BINFMT}/register", "w") as f:
                f.write(rule)
            os.execvp(sys.argv[2], sys.argv[2:])
        except OSError as e:
            fail(f"{e}")
    os.close(ready_w)
    os.close(go_r)
    if os.read(ready_r, 1) == b"u":
        try:
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{pid}/{name}", "w") as f:
                    f.write("0 0 4294967295\n")
            os.write(go_w, b"g")
        except OSError as e:
            sys.stderr.write(f"emulated.py: writing the namespace's id maps: {e}\n")
    os.close(go_w)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else 128 + os.WTERMSIG(status))


if __name__ == "__main__":
    main()
