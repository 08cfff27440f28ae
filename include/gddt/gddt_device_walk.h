/*
 * The layout walker of gddt's device API (gddt_device_core.h includes it): a
 * packed byte's place in a typed buffer, and the windows of packed bytes moved
 * to and from it word by word by the lanes of a call, on the GPU and on the
 * host alike.
 */
#ifndef GDDT_GDDT_DEVICE_WALK_H
#define GDDT_GDDT_DEVICE_WALK_H

#include <stdint.h>

#include "gddt/gddt_device.h"

#if defined(__CUDACC__)
#define GDDT_HD __host__ __device__
#define GDDT_NOINLINE __noinline__
#else
#define GDDT_HD
#define GDDT_NOINLINE
#endif
// The device pass only: nvcc's host pass hands the pragma to a host compiler that may warn.
#if defined(__CUDA_ARCH__)
#define GDDT_UNROLL _Pragma("unroll")
#else
#define GDDT_UNROLL
#endif

namespace gddt::device {

// Offset from the buffer of packed byte `p` of the stream of elements (any
// count: element p / size). Every division is in `U`: a window and an element
// under 4 GiB take 32-bit ones, several times cheaper on a GPU than 64-bit ones
// (about five a word, where one block moves a whole message). Not inlined: a
// lane computes several a round (move_words), and inlined copies of the walk
// made the device API's translation units take minutes to compile.
template <typename U>
GDDT_HD GDDT_NOINLINE int64_t typed_offset_in(const gddt_device_layout_t &l, U p) {
  const U size = static_cast<U>(l.size);
  const U element = p / size;
  const U in_element = p - element * size;
  const U group_bytes = static_cast<U>(l.group_bytes);
  U group = in_element / group_bytes;
  U q = in_element - group * group_bytes;
  int64_t off = static_cast<int64_t>(element) * l.extent;
  for (int d = 0; d < l.nrepeat; ++d) {
    const U c = static_cast<U>(l.repeat[d].count);
    const U next = group / c;
    off += static_cast<int64_t>(group - next * c) * l.repeat[d].stride;
    group = next;
  }
  int lo = 0, hi = l.npieces - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (static_cast<U>(l.pieces[mid].packed_begin) <= q) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const gddt_device_piece_t &piece = l.pieces[lo];
  q -= static_cast<U>(piece.packed_begin);
  const U piece_block = static_cast<U>(piece.block);
  U block = q / piece_block;
  off += piece.offset + static_cast<int64_t>(q - block * piece_block);
  for (int d = 0; d < piece.ndims; ++d) {
    const U c = static_cast<U>(piece.dims[d].count);
    const U next = block / c;
    off += static_cast<int64_t>(block - next * c) * piece.dims[d].stride;
    block = next;
  }
  return off;
}

GDDT_HD inline int64_t typed_offset(const gddt_device_layout_t &l, int64_t p) {
  return typed_offset_in<uint64_t>(l, static_cast<uint64_t>(p));
}

// The offsets of packed bytes p, p + step, ... (K of them) into off. One piece
// without repeats (vectors, subarrays, most halos) divides for all K side by
// side, its fields read once; any other layout walks each byte on its own.
template <typename U, int K>
GDDT_HD GDDT_NOINLINE void typed_offsets(const gddt_device_layout_t &l, U p, U step, int64_t *off) {
  if (l.npieces != 1 || l.nrepeat != 0) {
    for (int j = 0; j < K; ++j) off[j] = typed_offset_in<U>(l, p + static_cast<U>(j) * step);
    return;
  }
  const gddt_device_piece_t &piece = l.pieces[0];
  const U size = static_cast<U>(l.size);
  const U piece_block = static_cast<U>(piece.block);
  U block[K];
  GDDT_UNROLL
  for (int j = 0; j < K; ++j) {
    const U q = p + static_cast<U>(j) * step;
    const U element = q / size;
    const U in_element = q - element * size;
    block[j] = in_element / piece_block;
    off[j] = static_cast<int64_t>(element) * l.extent + piece.offset +
             static_cast<int64_t>(in_element - block[j] * piece_block);
  }
  for (int d = 0; d < piece.ndims; ++d) {
    const U c = static_cast<U>(piece.dims[d].count);
    const int64_t stride = piece.dims[d].stride;
    GDDT_UNROLL
    for (int j = 0; j < K; ++j) {
      const U next = block[j] / c;
      off[j] += static_cast<int64_t>(block[j] - next * c) * stride;
      block[j] = next;
    }
  }
}

template <int W>
struct Word {
  alignas(W) unsigned char b[W];
};

// A load that skips the SM's L1: the staging is mapped host memory the proxy rewrites between
// messages, and a line of an earlier message in the same slot may still sit in L1 (not coherent).
template <typename T>
GDDT_HD inline T load_fresh(const T *p) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 16) {
    const uint4 v = __ldcv(reinterpret_cast<const uint4 *>(p));
    return *reinterpret_cast<const T *>(&v);
  } else if constexpr (sizeof(T) == 8) {
    const unsigned long long v = __ldcv(reinterpret_cast<const unsigned long long *>(p));
    return *reinterpret_cast<const T *>(&v);
  } else if constexpr (sizeof(T) == 4) {
    const unsigned int v = __ldcv(reinterpret_cast<const unsigned int *>(p));
    return *reinterpret_cast<const T *>(&v);
  } else if constexpr (sizeof(T) == 2) {
    const unsigned short v = __ldcv(reinterpret_cast<const unsigned short *>(p));
    return *reinterpret_cast<const T *>(&v);
  } else {
    const unsigned char v = __ldcv(reinterpret_cast<const unsigned char *>(p));
    return *reinterpret_cast<const T *>(&v);
  }
#else
  return *p;
#endif
}

// Words a lane has in flight at once. The staging is host memory across PCIe (about a
// microsecond a read) and often one block moves a whole message: a lane that waits for each
// word before the next moves 256 threads * 8 bytes a microsecond (a 1 MiB receive took 1.6 ms
// on an H200), so each lane issues all its loads of a round before its first store.
template <int W>
constexpr int kWordsInFlight = W >= 8 ? 8 : 16;

template <int W, typename U>
GDDT_HD inline void move_words(const gddt_device_layout_t &l, unsigned char *typed, unsigned char *packed,
                               int64_t words, bool pack, int lane, int lanes) {
  constexpr int kU = kWordsInFlight<W>;
  const int64_t round = static_cast<int64_t>(lanes) * kU;
  int64_t first = 0;
  for (; first + round <= words; first += round) {
    int64_t off[kU];
    typed_offsets<U, kU>(l, static_cast<U>((first + lane) * W), static_cast<U>(int64_t{lanes} * W), off);
    Word<W> v[kU];
    Word<W> *words_packed = reinterpret_cast<Word<W> *>(packed) + first + lane;
    if (pack) {
      GDDT_UNROLL
      for (int j = 0; j < kU; ++j) v[j] = *reinterpret_cast<const Word<W> *>(typed + off[j]);
      GDDT_UNROLL
      for (int j = 0; j < kU; ++j) words_packed[j * int64_t{lanes}] = v[j];
    } else {
      GDDT_UNROLL
      for (int j = 0; j < kU; ++j) v[j] = load_fresh(words_packed + j * int64_t{lanes});
      GDDT_UNROLL
      for (int j = 0; j < kU; ++j) *reinterpret_cast<Word<W> *>(typed + off[j]) = v[j];
    }
  }
  for (int64_t i = first + lane; i < words; i += lanes) {
    Word<W> *t = reinterpret_cast<Word<W> *>(typed + typed_offset_in<U>(l, static_cast<U>(i * W)));
    Word<W> *s = reinterpret_cast<Word<W> *>(packed + i * W);
    if (pack) {
      *s = *t;
    } else {
      *t = load_fresh(s);
    }
  }
}

// move_words of width w (a power of two up to 16).
template <typename U, int W = 16>
GDDT_HD inline void move_all_words(const gddt_device_layout_t &l, unsigned char *typed, unsigned char *packed,
                                   int64_t words, int w, bool pack, int lane, int lanes) {
  if constexpr (W > 1) {
    if (w < W) return move_all_words<U, W / 2>(l, typed, packed, words, w, pack, lane, lanes);
  }
  move_words<W, U>(l, typed, packed, words, pack, lane, lanes);
}

// Moves packed bytes [0, bytes) of `typed` (elements of `l`) to or from
// `packed`, the lanes taking words in turn so that a warp's accesses to the
// packed side are contiguous. Words are as wide as the layout and both
// addresses allow: every block and packed offset is a multiple of the layout's
// width, so no word straddles two blocks.
GDDT_HD GDDT_NOINLINE inline void move_window(const gddt_device_layout_t &l, void *typed_buffer, void *packed_buffer,
                                              int64_t bytes, bool pack, int lane, int lanes) {
  if (bytes <= 0 || l.size <= 0) return;
  unsigned char *typed = static_cast<unsigned char *>(typed_buffer);
  unsigned char *packed = static_cast<unsigned char *>(packed_buffer);
  int w = l.width;
  while (w > 1 && ((reinterpret_cast<uintptr_t>(typed) | reinterpret_cast<uintptr_t>(packed)) % w) != 0) w /= 2;
  const int64_t words = bytes / w;
  if (static_cast<uint64_t>(bytes) <= UINT32_MAX && static_cast<uint64_t>(l.size) <= UINT32_MAX) {
    move_all_words<uint32_t>(l, typed, packed, words, w, pack, lane, lanes);
  } else {
    move_all_words<uint64_t>(l, typed, packed, words, w, pack, lane, lanes);
  }
  // A window that ends inside a word (a short receive): its last bytes one by
  // one.
  for (int64_t p = words * w + lane; p < bytes; p += lanes) {
    unsigned char *t = typed + typed_offset(l, p);
    if (pack) {
      packed[p] = *t;
    } else {
      *t = load_fresh(packed + p);
    }
  }
}

// Contiguous bytes, by the lanes in turn (allreduce vectors).
GDDT_HD inline void copy_bytes(void *dst, const void *src, int64_t bytes, int lane, int lanes) {
  unsigned char *d = static_cast<unsigned char *>(dst);
  const unsigned char *s = static_cast<const unsigned char *>(src);
  int64_t done = 0;
  if (((reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s)) % 8) == 0) {
    done = bytes / 8 * 8;
    for (int64_t i = lane; i < bytes / 8; i += lanes)
      reinterpret_cast<uint64_t *>(d)[i] = load_fresh(reinterpret_cast<const uint64_t *>(s) + i);
  }
  for (int64_t i = done + lane; i < bytes; i += lanes) d[i] = load_fresh(s + i);
}

}  // namespace gddt::device

#endif /* GDDT_GDDT_DEVICE_WALK_H */
