// The fuzz targets without libFuzzer: each file or directory named on the
// command line is read and passed to LLVMFuzzerTestOneInput once, as libFuzzer
// would replay it. Built into the ASan+UBSan build (RLOCK_SANITIZE=address,
// `./dev test`), so every target's corpus runs in CI with no clang build of
// its own; fuzzing for new inputs is `./dev fuzz`.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return true;
}

} // namespace

int main(int argc, char** argv) {
  std::size_t count = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) {
          ok = replay(entry.path()) && ok;
          ++count;
        }
      }
    } else {
      ok = replay(path) && ok;
      ++count;
    }
  }
  std::printf("replay: %zu inputs\n", count);
  return ok && count > 0 ? 0 : 1;
}
