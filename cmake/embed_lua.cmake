# Assembles every lua/*.lua script into ASM_DIR/<name>.lua and writes OUT: a C++
# source holding each assembled script's exact bytes and SHA1.
# Run as `cmake -DOUT=... -DLUA_DIR=... -DASM_DIR=... -P embed_lua.cmake` at build time.
#
# Redis gets each script on its own (SCRIPT LOAD / EVALSHA), so each must be whole
# when it is sent, but the source need not repeat itself: a line
#   -- @include NAME.lua
# (nothing else on it) is replaced by the contents of lua/lib/NAME.lua, whose own
# @include lines are replaced the same way. A library file already included in a
# script is not included again (its line is dropped), so a library may include
# what it needs without the script getting it twice. The library files are no
# scripts: only lua/*.lua (not lua/lib/) are assembled and embedded.
#
# A line "-- @deadline ARGV[N]" in a script's own file says which argument
# carries its deadline (redis::Script::deadline_arg; lua/lib/deadline.lua).
#
# The text is only ever held in quoted variables and cut with string(FIND) and
# string(SUBSTRING): a ';' in Lua code is not a CMake list separator here, and an
# assembled script is the byte-exact concatenation of its pieces.

# Script mode starts with no policies set; while(TRUE) and IN_LIST need them.
cmake_minimum_required(VERSION 3.18)

# lua_assemble(PATH OUT_VAR): PATH's text with its @include lines replaced.
# The files included so far in this script are in the global property
# RLOCK_LUA_INCLUDED.
function(lua_assemble path out_var)
  file(READ "${path}" text)
  set(result "")
  set(marker "-- @include ")
  while(TRUE)
    string(FIND "${text}" "${marker}" at)
    if(at EQUAL -1)
      break()
    endif()
    # Only a marker at the start of a line is an include.
    set(line_start FALSE)
    if(at EQUAL 0)
      set(line_start TRUE)
    else()
      math(EXPR before "${at} - 1")
      string(SUBSTRING "${text}" ${before} 1 previous)
      if(previous STREQUAL "\n")
        set(line_start TRUE)
      endif()
    endif()
    string(SUBSTRING "${text}" 0 ${at} head)
    string(SUBSTRING "${text}" ${at} -1 tail)
    if(NOT line_start)
      string(LENGTH "${marker}" skip)
      string(SUBSTRING "${tail}" 0 ${skip} kept)
      string(SUBSTRING "${tail}" ${skip} -1 text)
      string(APPEND result "${head}${kept}")
      continue()
    endif()
    string(FIND "${tail}" "\n" eol)
    if(eol EQUAL -1)
      set(line "${tail}")
      set(text "")
    else()
      string(SUBSTRING "${tail}" 0 ${eol} line)
      math(EXPR next "${eol} + 1")
      string(SUBSTRING "${tail}" ${next} -1 text)
    endif()
    if(NOT line MATCHES "^-- @include ([A-Za-z0-9_]+\\.lua)[ \t]*$")
      message(FATAL_ERROR "${path}: not an include line (-- @include NAME.lua): '${line}'")
    endif()
    set(lib "${CMAKE_MATCH_1}")
    string(APPEND result "${head}")
    get_property(included GLOBAL PROPERTY RLOCK_LUA_INCLUDED)
    if(NOT lib IN_LIST included)
      if(NOT EXISTS "${LUA_DIR}/lib/${lib}")
        message(FATAL_ERROR "${path}: includes ${lib}, but ${LUA_DIR}/lib/${lib} does not exist")
      endif()
      set_property(GLOBAL APPEND PROPERTY RLOCK_LUA_INCLUDED "${lib}")
      lua_assemble("${LUA_DIR}/lib/${lib}" body)
      string(APPEND result "${body}")
    endif()
  endwhile()
  string(APPEND result "${text}")
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

file(GLOB files ${LUA_DIR}/*.lua)
list(SORT files)
file(MAKE_DIRECTORY ${ASM_DIR})
# An assembled script whose source has gone would still be counted by the tests.
file(GLOB stale ${ASM_DIR}/*.lua)
foreach(f ${files})
  get_filename_component(name ${f} NAME)
  list(REMOVE_ITEM stale ${ASM_DIR}/${name})
endforeach()
if(stale)
  file(REMOVE ${stale})
endif()
set(body "// Generated from lua/*.lua (with lua/lib/) by cmake/embed_lua.cmake. Do not edit.\n")
string(APPEND body "#include <rlock/redis/script.hpp>\n\nnamespace rlock::scripts {\n")
foreach(f ${files})
  get_filename_component(name ${f} NAME_WE)
  set_property(GLOBAL PROPERTY RLOCK_LUA_INCLUDED "")
  lua_assemble("${f}" script)
  set(assembled ${ASM_DIR}/${name}.lua)
  file(WRITE ${assembled}.tmp "${script}")
  file(COPY_FILE ${assembled}.tmp ${assembled} ONLY_IF_DIFFERENT)
  file(REMOVE ${assembled}.tmp)
  file(READ ${assembled} text HEX)
  file(SHA1 ${assembled} sha)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${text}")
  string(APPEND body "static const char k_${name}_text[] = {${bytes} 0};\n")
  # A line "-- @deadline ARGV[N]" in the script's own text: ARGV[N] is the
  # deadline the client fills in for each send (lua/lib/deadline.lua).
  file(READ ${f} own)
  set(deadline 0)
  if(own MATCHES "\n-- @deadline ARGV\\[([0-9]+)\\]")
    set(deadline ${CMAKE_MATCH_1})
  endif()
  string(APPEND body "const redis::Script ${name}{\"${name}\", {k_${name}_text, sizeof(k_${name}_text) - 1}, \"${sha}\", ${deadline}};\n")
endforeach()
string(APPEND body "} // namespace rlock::scripts\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
