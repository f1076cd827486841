// The executable loads no BLAS and no CUDA library at start: the CPU backend dlopens
// OpenBLAS and the CUDA backend is a module found at run time. Checked on the ELF file
// itself (its DT_NEEDED entries), and through the binary's own error messages.
#include <doctest/doctest.h>
#include <elf.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using napkin::test::run_napkin;

namespace {

// DT_NEEDED names of a 64-bit little-endian ELF file: the SHT_DYNAMIC section's entries,
// their names in the string table its sh_link names (System V gABI, "Dynamic Section").
std::vector<std::string> needed_libraries(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  REQUIRE(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(eh.e_ident[EI_CLASS] == ELFCLASS64);
  auto section = [&](std::size_t i) {
    Elf64_Shdr sh;
    REQUIRE(eh.e_shoff + (i + 1) * sizeof sh <= bytes.size());
    std::memcpy(&sh, bytes.data() + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
    return sh;
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr dyn = section(i);
    if (dyn.sh_type != SHT_DYNAMIC) continue;
    const Elf64_Shdr str = section(dyn.sh_link);
    for (std::size_t off = 0; off + sizeof(Elf64_Dyn) <= dyn.sh_size; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + dyn.sh_offset + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED) out.emplace_back(bytes.data() + str.sh_offset + d.d_un.d_val);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the napkin executable needs no BLAS and no CUDA library at load time") {
  const auto needed = needed_libraries(NAPKIN_BINARY);
  REQUIRE_FALSE(needed.empty());  // libc at least: the parser found the dynamic section
  bool libc = false;
  for (const std::string& lib : needed) {
    CAPTURE(lib);
    libc |= lib.rfind("libc.so", 0) == 0;
    for (const char* banned : {"libcublas", "libcudart", "libcuda.", "libnvidia-ml", "libopenblas", "libblas"})
      CHECK(lib.find(banned) == std::string::npos);
  }
  CHECK(libc);
  // Cross-check the parser with binutils where it is installed (it is wherever g++ is).
  if (std::system("command -v readelf >/dev/null 2>&1") == 0) {
    const std::string cmd = "readelf -d '" NAPKIN_BINARY "' | grep -c NEEDED";
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p);
    int count = -1;
    CHECK(std::fscanf(p, "%d", &count) == 1);
    pclose(p);
    CHECK(count == static_cast<int>(needed.size()));
  }
}

TEST_CASE("a CUDA module that is not where NAPKIN_CUDA_MODULE says is one line naming the place") {
  const auto r = run_napkin("bench --device cuda --shape 64", "NAPKIN_CUDA_MODULE=/nonexistent/libnapkin_cuda.so");
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "napkin: error: no CUDA module: libnapkin_cuda.so not found (looked in "
                 "NAPKIN_CUDA_MODULE=/nonexistent/libnapkin_cuda.so)\n");
  // The CPU is unaffected, and --device auto falls back to it.
  const auto list = run_napkin("bench --list-devices --json", "NAPKIN_CUDA_MODULE=/nonexistent/libnapkin_cuda.so");
  REQUIRE(list.exit_code == 0);
  const auto j = nlohmann::json::parse(list.out);
  CHECK(j[0]["key"] == "cuda");
  CHECK(j[0]["available"] == false);
  CHECK(j[1]["available"] == true);
}

TEST_CASE("a file that is not a shared object is refused with the loader's reason") {
  const std::string path = "napkin_not_a_module_" + std::to_string(getpid()) + ".so";
  std::ofstream(path) << "not an ELF file\n";
  const auto r = run_napkin("bench --device cuda --shape 64", "NAPKIN_CUDA_MODULE=" + path);
  std::filesystem::remove(path);
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("napkin: error: cannot load the CUDA module " + path + ": ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

#ifdef NAPKIN_HAVE_CUDA_MODULE
TEST_CASE("cmake --install puts the module in lib/napkin/, where the installed napkin finds it") {
  const auto prefix = std::filesystem::absolute("napkin_install_" + std::to_string(getpid()));
  const std::string cmd = "cmake --install '" NAPKIN_BUILD_DIR "' --prefix '" + prefix.string() + "' >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::filesystem::path module;
  for (const auto& e : std::filesystem::recursive_directory_iterator(prefix))
    if (e.path().filename() == "libnapkin_cuda.so") module = e.path();
  REQUIRE_FALSE(module.empty());
  CHECK(module.parent_path().filename() == "napkin");
  // The installed binary, not the build tree's: the module it loads is the installed one.
  // Without a GPU it reaches the module's driver check; with a broken module it would not.
  std::string run = (prefix / "bin" / "napkin").string();
  run.insert(0, 1, '\'');
  run += "' bench --list-devices --json 2>&1";
  FILE* p = popen(run.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  CHECK(pclose(p) == 0);
  const auto j = nlohmann::json::parse(out);
  const std::string detail = j[0]["detail"];
  CAPTURE(detail);
  CHECK(detail.find("no CUDA module") == std::string::npos);
  std::filesystem::remove_all(prefix);
}
#endif
