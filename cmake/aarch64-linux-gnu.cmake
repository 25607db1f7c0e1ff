# Cross-compiling rlock for arm64 (aarch64) Debian on another machine:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DRLOCK_SYSROOT=/path/to/an/arm64/root
# (`./dev package --arch arm64` makes the root and does this.) The compilers
# are Debian's crossbuild-essential-arm64; headers and libraries come from
# RLOCK_SYSROOT, a Debian 12 arm64 root holding the -dev packages the build
# needs (tests/arm64/roots.sh, arm64_sysroot). Its tests run under qemu-user:
# `./dev test --arch arm64` (tests/arm64/check.sh), not CTest.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The root: -DRLOCK_SYSROOT, or the environment's RLOCK_SYSROOT (CMake reads
# this file again for each check it compiles, where only the environment is).
if(NOT RLOCK_SYSROOT)
  set(RLOCK_SYSROOT "$ENV{RLOCK_SYSROOT}")
endif()
if(NOT RLOCK_SYSROOT OR NOT EXISTS "${RLOCK_SYSROOT}/usr/include/aarch64-linux-gnu")
  message(FATAL_ERROR "aarch64-linux-gnu.cmake: RLOCK_SYSROOT must name a Debian arm64 root with "
                      "libc6-dev (got '${RLOCK_SYSROOT}'); ./dev package --arch arm64 makes one")
endif()
set(ENV{RLOCK_SYSROOT} "${RLOCK_SYSROOT}")
set(CMAKE_SYSROOT "${RLOCK_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config (hiredis) reads the root's .pc files and prefixes their paths.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${RLOCK_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR} "${RLOCK_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${RLOCK_SYSROOT}/usr/share/pkgconfig")

# The Debian package: its architecture, and where dpkg-shlibdeps finds the
# libraries the binary loads (the root's; it reads their package's symbols
# file from the root's DEBIAN/, which arm64_sysroot fills with libc6's control
# files: the versions it names are arm64's libc6's).
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    "${RLOCK_SYSROOT}/lib/aarch64-linux-gnu;${RLOCK_SYSROOT}/usr/lib/aarch64-linux-gnu")
