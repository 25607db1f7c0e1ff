# Read by cpack (CPACK_PROJECT_CONFIG_FILE) before it packs: the package's
# Depends from the binary as it is linked now. `readelf -d` lists a NEEDED entry
# per shared library the binary loads: rlock loads the host's C library
# (libc.so.6, libm.so.6, the loader; mbed TLS, hiredis, libstdc++ and libgcc
# are inside it), so dpkg-shlibdeps (dpkg-dev) names libc6 and the version of
# it the binary's symbols need. It does not see one need: a binary with packed
# relative relocations (DT_RELR) asks the loader for the version
# GLIBC_ABI_DT_RELR (glibc >= 2.36) and references no symbol of it; read from
# `readelf -V` and libc6's symbols file, that floor is added here. A binary without a
# NEEDED entry (a static build) depends on no library.
include(${CPACK_RLOCK_BINARY_INFO}) # RLOCK_PACKED_BINARY, RLOCK_READELF

if(NOT EXISTS "${RLOCK_PACKED_BINARY}")
  message(FATAL_ERROR "rlock package: ${RLOCK_PACKED_BINARY} is not built yet (cmake --build first)")
endif()
if(NOT RLOCK_READELF)
  message(FATAL_ERROR "rlock package: readelf (binutils) is needed to see what ${RLOCK_PACKED_BINARY} links")
endif()
execute_process(COMMAND ${RLOCK_READELF} -d ${RLOCK_PACKED_BINARY}
                OUTPUT_VARIABLE rlock_dynamic RESULT_VARIABLE rlock_readelf_status)
if(NOT rlock_readelf_status EQUAL 0)
  message(FATAL_ERROR "rlock package: readelf -d ${RLOCK_PACKED_BINARY} failed")
endif()
if(rlock_dynamic MATCHES "\\(NEEDED\\)")
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  execute_process(COMMAND ${RLOCK_READELF} -V ${RLOCK_PACKED_BINARY}
                  OUTPUT_VARIABLE rlock_versions RESULT_VARIABLE rlock_readelf_status)
  if(NOT rlock_readelf_status EQUAL 0)
    message(FATAL_ERROR "rlock package: readelf -V ${RLOCK_PACKED_BINARY} failed")
  endif()
  if(rlock_versions MATCHES "Name: GLIBC_ABI_DT_RELR")
    # The first libc6 with it, as its symbols file says (where dpkg-shlibdeps
    # looks too); CPack joins it with dpkg-shlibdeps' answer: both hold.
    set(rlock_relr_glibc 2.36)
    file(GLOB rlock_libc_symbols /var/lib/dpkg/info/libc6*.symbols)
    foreach(symbols IN LISTS rlock_libc_symbols)
      file(STRINGS ${symbols} rlock_relr_line REGEX "GLIBC_ABI_DT_RELR@GLIBC_ABI_DT_RELR [0-9.]+")
      if(rlock_relr_line MATCHES "GLIBC_ABI_DT_RELR ([0-9.]+)")
        set(rlock_relr_glibc ${CMAKE_MATCH_1})
      endif()
    endforeach()
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${rlock_relr_glibc})")
  endif()
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "")
endif()
