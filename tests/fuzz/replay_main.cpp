// A main for the fuzz targets where libFuzzer is not available (g++, or
// clang without -fsanitize=fuzzer): runs the target once on every file named
// on the command line, or in a folder named there. ctest replays the seed
// corpus this way in every build, so the targets compile and their seeds
// pass everywhere; clang builds with LOUPE_FUZZ=ON fuzz for real.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "error: cannot read %s\n", path.string().c_str());
        return false;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE_OR_FOLDER...   (runs the fuzz target once per file)\n", argv[0]);
        return 2;
    }
    std::size_t runs = 0;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path p(argv[i]);
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(p)) {
                if (!entry.is_regular_file()) continue;
                if (!run_file(entry.path())) return 1;
                ++runs;
            }
        } else {
            if (!run_file(p)) return 1;
            ++runs;
        }
    }
    if (runs == 0) {
        std::fprintf(stderr, "error: no input files under the paths given\n");
        return 1;
    }
    std::printf("%zu inputs ran\n", runs);
    return 0;
}
