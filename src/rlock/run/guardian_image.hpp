#pragma once

// The small guardian program (src/guardian/guardian.c), built and embedded by
// CMake (cmake/embed_guardian.cmake); empty where it is not built (neither
// x86-64 nor aarch64).

#include <cstddef>

namespace rlock::run {

extern const unsigned char k_guardian_image[];
extern const std::size_t k_guardian_image_size;

} // namespace rlock::run
