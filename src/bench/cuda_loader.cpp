// Finds and loads the CUDA module (bench/cuda_module.hpp) when a command needs a GPU. The
// executable itself links no CUDA library: an estimate never pays for one.
//
// Where it looks, in order: $NAPKIN_CUDA_MODULE (a path; if set, nowhere else), beside the
// executable (the build tree), then the install's lib/napkin/ relative to the executable.
// Every way it can fail is one line that says why (the driver checks are the module's own).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/cuda_module.hpp"

#ifndef NAPKIN_CUDA_MODULE_RELDIR
#define NAPKIN_CUDA_MODULE_RELDIR "../lib/napkin"
#endif
#ifndef NAPKIN_CUDA_MODULE_BUILT
#define NAPKIN_CUDA_MODULE_BUILT 0
#endif

namespace napkin::bench {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> candidates() {
  if (const char* env = std::getenv("NAPKIN_CUDA_MODULE"); env && *env) return {env};
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path dir = exe.parent_path();
  const fs::path reldir(NAPKIN_CUDA_MODULE_RELDIR);
  const fs::path installed = reldir.is_absolute() ? reldir : (dir / reldir).lexically_normal();
  return {(dir / cuda_module_file).string(), (installed / cuda_module_file).string()};
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
  const bool from_env = std::getenv("NAPKIN_CUDA_MODULE") && *std::getenv("NAPKIN_CUDA_MODULE");
  const auto paths = candidates();
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) continue;
    // Never closed: the backend's code lives there for as long as the process may call it.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* err = dlerror();
      const std::string why = err ? err : "unknown dlopen error";
      // A dependency the module names is missing (libcublasLt.so.13, ...), or the file is not a module.
      if (why.find("cannot open shared object file") != std::string::npos && why.find(path) == std::string::npos)
        return make_unavailable_backend("cuda", "CUDA libraries missing: " + why + " (needed by " + path + ")");
      return make_unavailable_backend("cuda", "cannot load the CUDA module " + path + ": " + why);
    }
    auto entry = reinterpret_cast<CudaModuleEntryFn>(dlsym(handle, cuda_module_entry));
    if (!entry)
      return make_unavailable_backend("cuda", path + " is not a napkin CUDA module (no " + cuda_module_entry + ")");
    const CudaModuleV1* m = entry();
    if (!m || m->abi_version != cuda_module_abi_version || !m->napkin_version ||
        std::strcmp(m->napkin_version, NAPKIN_VERSION) != 0)
      return make_unavailable_backend(
          "cuda", path + " was built for another napkin (module ABI " + std::to_string(m ? m->abi_version : -1) + ", " +
                      (m && m->napkin_version ? m->napkin_version : "?") + "; this napkin " + NAPKIN_VERSION + ", ABI " +
                      std::to_string(cuda_module_abi_version) + "): rebuild or reinstall napkin");
    Backend* backend = m->create_backend();
    if (!backend) return make_unavailable_backend("cuda", "the CUDA module could not create its backend (out of memory)");
    return std::unique_ptr<Backend>(backend);
  }
  std::string why = "no CUDA module: " + std::string(cuda_module_file) + " not found (looked in " +
                    (from_env ? "NAPKIN_CUDA_MODULE=" : "") + joined(paths) + ")";
  if (!NAPKIN_CUDA_MODULE_BUILT && !from_env) why += "; this napkin was built without the CUDA Toolkit";
  return make_unavailable_backend("cuda", why);
}

bool cuda_compiled_in() { return NAPKIN_CUDA_MODULE_BUILT; }

}  // namespace napkin::bench
