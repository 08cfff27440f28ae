// Watches changes to the process's address space made through the dynamic linker: gddt
// defines mmap, mmap64, munmap and mremap, so the calls other libraries make (the CUDA
// driver's among them) pass through here on their way to the kernel. The epoch changes with
// every such call; an answer "this address is host memory" learnt at one epoch stays true
// while the epoch is unchanged, because host memory can only turn into device memory after
// the driver maps something.
#pragma once

#include <atomic>
#include <cstdint>

namespace gddt::address_space {

namespace detail {
extern std::atomic<std::uint64_t> epoch_counter;  // read inline: the interposer's hot path asks it
}

inline std::uint64_t epoch() { return detail::epoch_counter.load(std::memory_order_acquire); }

// Whether every mapping reaches the epoch. UCX (in MPI libraries built with it) patches the mmap
// calls of every library to its own hooks, which go past the wrappers here: where UCX is loaded,
// the epoch follows its memory events too, through a handler registered without installing any
// hook of UCX's own (so a process whose UCX hooks nothing keeps going through the wrappers). False
// where UCX is loaded and refuses the handler. Asked once; later calls return the first answer.
bool sees_every_mapping();

// Moves the epoch without a mapping: every answer learnt so far stops answering.
inline void forget_answers() { detail::epoch_counter.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace gddt::address_space
