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
# What is sent is then put on a diet (lua_diet, issue 45): Redis runs a script's
# whole text on every EVALSHA, so each `local function` it defines is a closure
# made anew on every call (about 0.1 us each on a 2-core VM), whether the call
# reaches it or not. A library function that none of the script's own code can
# call (its name appears nowhere in the top-level code or in a function that is
# kept, comments aside) is left out, with the comment lines just above it; and
# full-line comments (lines whose first non-blank characters are "--") are
# left out of what is sent: the server keeps every script's text for as long as
# it runs. ASM_DIR/NAME.lua holds exactly what is sent (its line numbers are the
# ones a server's error names). A name that appears is kept, so the diet can
# keep too much, never too little; the sources must have no long strings or
# comments ("[[", "--[") for the line rules to hold, and the build stops if
# they do.
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

# lua_diet(TEXT OUT_VAR): TEXT (an assembled script) without the top-level
# `local function`s nothing else in it calls, and without full-line comments
# (see the top of this file). A function runs from a line "local function
# NAME(" to the first line that is exactly "end" (the sources indent every
# inner block); the full-line comments right above it go with it.
function(lua_diet text out_var)
  string(FIND "${text}" "[[" long_string)
  string(FIND "${text}" "--[" long_comment)
  if(NOT long_string EQUAL -1 OR NOT long_comment EQUAL -1)
    message(FATAL_ERROR "a script has a long string or comment ([[ or --[): lua_diet's line rules do not hold")
  endif()
  # The pieces, in order: piece_N holds the text, name_N the function's name
  # ("" for top-level code, which is always kept).
  set(rest "\n${text}")
  set(count 0)
  set(marker "\nlocal function ")
  while(TRUE)
    string(FIND "${rest}" "${marker}" at)
    if(at EQUAL -1)
      set(piece_${count} "${rest}")
      set(name_${count} "")
      math(EXPR count "${count} + 1")
      break()
    endif()
    string(SUBSTRING "${rest}" 0 ${at} before)
    string(SUBSTRING "${rest}" ${at} -1 after)
    # The comment lines just above the function go with it.
    while(TRUE)
      string(FIND "${before}" "\n" eol REVERSE)
      if(eol EQUAL -1)
        break()
      endif()
      string(SUBSTRING "${before}" ${eol} -1 last)
      if(NOT last MATCHES "^\n[ \t]*--")
        break()
      endif()
      string(SUBSTRING "${before}" 0 ${eol} before)
      set(after "${last}${after}")
    endwhile()
    set(piece_${count} "${before}")
    set(name_${count} "")
    math(EXPR count "${count} + 1")
    string(FIND "${after}" "${marker}" start)
    string(SUBSTRING "${after}" ${start} -1 body)
    if(NOT body MATCHES "^\nlocal function ([A-Za-z_][A-Za-z0-9_]*)\\(")
      message(FATAL_ERROR "lua_diet: a 'local function' line without a name and '('")
    endif()
    set(name_${count} "${CMAKE_MATCH_1}")
    string(FIND "${body}" "\nend\n" stop)
    if(stop EQUAL -1)
      string(LENGTH "${body}" length)
      math(EXPR tail_at "${length} - 4")
      string(SUBSTRING "${body}" ${tail_at} -1 tail)
      if(NOT tail STREQUAL "\nend")
        message(FATAL_ERROR "lua_diet: local function ${name_${count}} has no 'end' line")
      endif()
      set(stop ${tail_at})
    endif()
    math(EXPR cut "${start} + ${stop} + 4")
    string(SUBSTRING "${after}" 0 ${cut} piece_${count})
    string(SUBSTRING "${after}" ${cut} -1 rest)
    math(EXPR count "${count} + 1")
  endwhile()
  # Kept: the top-level code, then every function named in what is kept, until
  # a pass finds no more (each pass only reads what the last one added).
  math(EXPR last "${count} - 1")
  set(frontier "")
  foreach(i RANGE ${last})
    set(kept_${i} FALSE)
    if(name_${i} STREQUAL "")
      set(kept_${i} TRUE)
      string(APPEND frontier "${piece_${i}}")
    endif()
  endforeach()
  while(NOT frontier STREQUAL "")
    string(REGEX REPLACE "\n[ \t]*--[^\n]*" "" frontier "${frontier}\n")
    set(added "")
    foreach(i RANGE ${last})
      if(NOT kept_${i} AND "${frontier}" MATCHES "[^A-Za-z0-9_]${name_${i}}[^A-Za-z0-9_]")
        set(kept_${i} TRUE)
        string(APPEND added "${piece_${i}}")
      endif()
    endforeach()
    set(frontier "${added}")
  endwhile()
  set(result "")
  foreach(i RANGE ${last})
    if(kept_${i})
      string(APPEND result "${piece_${i}}")
    endif()
  endforeach()
  string(REGEX REPLACE "\n[ \t]*--[^\n]*" "" result "${result}")
  # (the "\n" put in front at the start)
  string(SUBSTRING "${result}" 1 -1 result)
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
  lua_diet("${script}" script)
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
