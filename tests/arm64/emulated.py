#!/usr/bin/env python3
"""emulated.py [--update-binfmts] QEMU CMD [ARG...]: runs CMD where this
machine executes arm64 (aarch64) programs under qemu-user, without changing
the machine for anyone else: in a user namespace of its own (every uid and gid
mapped to itself, so files keep their owners and root stays root), with a
mount namespace whose binfmt_misc (Linux >= 6.7 gives each user namespace its
own) sends aarch64 ELF files to the emulator of QEMU, a root holding Debian's
qemu-user-static (tests/arm64/roots.sh, arm64_qemu, arm64_qemu12), registered
as a Debian machine registers it: by systemd-binfmt from its
usr/lib/binfmt.d/qemu-aarch64.conf (flags OPF: the emulator gets the program
as an open file), or with --update-binfmts as binfmt-support's update-binfmts
does from its usr/share/binfmts/qemu-aarch64 (Debian 12's default without
systemd, as in most containers: flags PF, no O, so the emulator opens the
program by the path that was executed). The interpreter is taken inside QEMU.
Everything CMD starts inherits it; the registration ends with the namespace,
when the last of them exits. Needs root. Exits with CMD's status."""
import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
BINFMT = "/proc/sys/fs/binfmt_misc"
RULE = "usr/lib/binfmt.d/qemu-aarch64.conf"  # in qemu-user-static: systemd-binfmt's
BINFMTS = "usr/share/binfmts/qemu-aarch64"  # update-binfmts' (binfmt-support)


def fail(message):
    sys.stderr.write(f"emulated.py: {message}\n")
    sys.exit(70)


def systemd_rule(qemu):
    """The rule systemd-binfmt registers: the binfmt.d file's line as it is."""
    try:
        with open(os.path.join(qemu, RULE)) as f:
            # :name:type:offset:magic:mask:interpreter:flags
            fields = f.read().strip().split(":")
    except OSError as e:
        fail(f"{qemu}/{RULE}: {e.strerror}")
    if len(fields) != 8 or not fields[6].startswith("/"):
        fail(f"{qemu}/{RULE}: not a binfmt_misc rule")
    return fields


def update_binfmts_rule(qemu):
    """The rule update-binfmts --import registers from the package's file:
    its magic, mask and offset, and a flag for each "yes" of credentials (C,
    which implies O), fix_binary (F) and preserve (P)."""
    try:
        with open(os.path.join(qemu, BINFMTS)) as f:
            entries = dict(line.split(None, 1) for line in f.read().splitlines() if line.strip())
    except (OSError, ValueError) as e:
        fail(f"{qemu}/{BINFMTS}: {e}")
    if not all(k in entries for k in ("interpreter", "magic")) or not entries["interpreter"].startswith("/"):
        fail(f"{qemu}/{BINFMTS}: no interpreter or magic")
    flags = "".join(flag for key, flag in (("preserve", "P"), ("credentials", "C"), ("fix_binary", "F"))
                    if entries.get(key, "no").strip() == "yes")
    return ["", "qemu-aarch64", "M", entries.get("offset", "0").strip(), entries["magic"].strip(),
            entries.get("mask", "").strip(), entries["interpreter"].strip(), flags]


def main():
    args = sys.argv[1:]
    update_binfmts = bool(args) and args[0] == "--update-binfmts"
    args = args[1:] if update_binfmts else args
    if len(args) < 2:
        fail("usage: emulated.py [--update-binfmts] QEMU CMD [ARG...]")
    if os.geteuid() != 0:
        fail("needs root (it maps every uid of this machine into its namespace)")
    qemu = os.path.abspath(args[0])
    fields = update_binfmts_rule(qemu) if update_binfmts else systemd_rule(qemu)
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
            os.execvp(args[1], args[1:])
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
