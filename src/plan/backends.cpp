// The list of backends built. The host backends are linked in. The CUDA backend is linked in
// the static library (its users link CUDA themselves) and is a module loaded on first use in the
// shared library (FLCC_CUDA_MODULE), so that libflcc.so loads and plans on the host on a
// machine without CUDA's libraries, and DEVICE plans report FLCC_NO_DEVICE there.
#include "plan/backend.h"

#include <cstring>
#include <string>

#ifdef FLCC_CUDA_MODULE
#include <dlfcn.h>
#endif

namespace flcc {

#ifdef FLCC_HAVE_HOST
const Backend& host_backend();
#endif
#ifdef FLCC_HAVE_FFTW
const Backend& fftw_backend();
#endif
#if defined(FLCC_HAVE_CUDA) && !defined(FLCC_CUDA_MODULE)
const Backend& cuda_backend();
#endif

namespace {

#ifdef FLCC_CUDA_MODULE
// The CUDA backend module: FLCC_CUDA_MODULE names its file (libflcc_cuda.so.2), looked for
// beside the library itself, then by the dynamic linker's search. Its entry point returns the
// backend when the module was built with this library's version, else nullptr.
const Backend* load_cuda_module()
{
    using Entry = const Backend* (*)(const char* version);
    std::string path = FLCC_CUDA_MODULE;
    Dl_info self;
    if (dladdr(reinterpret_cast<const void*>(&load_cuda_module), &self) != 0 &&
        self.dli_fname != nullptr) {
        const char* slash = std::strrchr(self.dli_fname, '/');
        if (slash != nullptr) path = std::string(self.dli_fname, slash + 1) + FLCC_CUDA_MODULE;
    }
    void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (module == nullptr) module = dlopen(FLCC_CUDA_MODULE, RTLD_NOW | RTLD_LOCAL);
    if (module == nullptr) return nullptr;
    const auto entry = reinterpret_cast<Entry>(dlsym(module, "flcc_cuda_backend"));
    const Backend* b = entry != nullptr ? entry(FLCC_VERSION_STRING) : nullptr;
    if (b == nullptr) dlclose(module);
    return b;   // the module stays loaded for the process's life
}
#endif

struct Present {
    std::vector<const Backend*> list;
    bool cuda_missing = false;   // built, but not loadable here
};

const Present& present()
{
    static const Present p = [] {
        Present r;
#ifdef FLCC_HAVE_HOST
        r.list.push_back(&host_backend());
#endif
#ifdef FLCC_HAVE_FFTW
        r.list.push_back(&fftw_backend());
#endif
#ifdef FLCC_CUDA_MODULE
        if (const Backend* cuda = load_cuda_module())
            r.list.push_back(cuda);
        else
            r.cuda_missing = true;
#elif defined(FLCC_HAVE_CUDA)
        r.list.push_back(&cuda_backend());
#endif
        return r;
    }();
    return p;
}

}  // namespace

const std::vector<const Backend*>& backends() { return present().list; }

const DeviceRuntime* device_runtime()
{
    for (const Backend* b : backends())
        if (const DeviceRuntime* r = b->device_runtime()) return r;
    return nullptr;
}

bool solver_of_missing_backend(const char* name)
{
    return present().cuda_missing && std::strncmp(name, "device.", 7) == 0;
}

}  // namespace flcc
