// Transparent huge pages for the large arrays of a replay.
//
// A full replay of a large cluster touches hundreds of MiB of op records in no order a
// cache or TLB can follow, and first touches them one 4 KiB page fault at a time. Linux
// backs a range advised with madvise(MADV_HUGEPAGE) by 2 MiB pages where its
// transparent huge pages are enabled for advised ranges (the default "madvise" setting
// of /sys/kernel/mm/transparent_hugepage/enabled; see the kernel's
// Documentation/admin-guide/mm/transhuge.rst): 512 times fewer faults and TLB entries. On
// GPT-1T full replay at 3,072 GPUs this took a fifth off the host time (issue 14).
// Elsewhere, and for arrays under 2 MiB, these do nothing.
#pragma once

#include <cstddef>
#include <vector>

namespace meshsim {

// Advises the whole pages inside [data, data + bytes) to be backed by huge pages. A hint:
// no effect on contents, and none where the system does not support it.
void AdviseHugePages(const void* data, size_t bytes);

// v.reserve(n), then the advice for v's whole capacity: call before the elements are
// written, since pages already touched keep their size. Growing past the capacity later
// moves the elements to memory without the advice (correct, only slower).
template <typename T>
void ReserveHuge(std::vector<T>& v, size_t n) {
  v.reserve(n);
  AdviseHugePages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace meshsim
