#pragma once

// The one place hiredis is included. Debian's hiredis is 0.14: only its reader and
// command formatter are used (rlock owns the sockets), which exist in every version.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <hiredis/hiredis.h>
#pragma GCC diagnostic pop
