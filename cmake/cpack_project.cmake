# Read by cpack (CPACK_PROJECT_CONFIG_FILE) before it packs: the package's
# Depends from the binary as it is linked now. `readelf -d` lists a NEEDED entry
# per shared library the binary loads; rlock is linked statically (a static PIE
# by default; plain -static has none either), so there are none, and the
# package depends on no library: mbed TLS, hiredis, libstdc++ and glibc are
# inside the binary. A build linked dynamically (-DRLOCK_STATIC=OFF, the
# sanitizer builds) has NEEDED entries: dpkg-shlibdeps (dpkg-dev) then names
# the packages of those libraries.

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
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "")
endif()
