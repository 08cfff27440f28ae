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
#else
#define GDDT_HD
#endif

namespace gddt::device {

// Offset from the buffer of packed byte `p` of the stream of elements (any
// count: element p / size).
GDDT_HD inline int64_t typed_offset(const gddt_device_layout_t &l, int64_t p) {
  const int64_t element = p / l.size;
  const int64_t in_element = p - element * l.size;
  int64_t group = in_element / l.group_bytes;
  int64_t q = in_element - group * l.group_bytes;
  int64_t off = element * l.extent;
  for (int d = 0; d < l.nrepeat; ++d) {
    const int64_t c = l.repeat[d].count;
    off += (group % c) * l.repeat[d].stride;
    group /= c;
  }
  int lo = 0, hi = l.npieces - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (l.pieces[mid].packed_begin <= q) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const gddt_device_piece_t &piece = l.pieces[lo];
  q -= piece.packed_begin;
  int64_t block = q / piece.block;
  off += piece.offset + (q - block * piece.block);
  for (int d = 0; d < piece.ndims; ++d) {
    const int64_t c = piece.dims[d].count;
    off += (block % c) * piece.dims[d].stride;
    block /= c;
  }
  return off;
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

template <int W>
GDDT_HD inline void move_words(const gddt_device_layout_t &l, unsigned char *typed, unsigned char *packed,
                               int64_t words, bool pack, int lane, int lanes) {
  for (int64_t i = lane; i < words; i += lanes) {
    Word<W> *t = reinterpret_cast<Word<W> *>(typed + typed_offset(l, i * W));
    Word<W> *s = reinterpret_cast<Word<W> *>(packed + i * W);
    if (pack) {
      *s = *t;
    } else {
      *t = load_fresh(s);
    }
  }
}

// Moves packed bytes [0, bytes) of `typed` (elements of `l`) to or from
// `packed`, the lanes taking words in turn so that a warp's accesses to the
// packed side are contiguous. Words are as wide as the layout and both
// addresses allow: every block and packed offset is a multiple of the layout's
// width, so no word straddles two blocks.
GDDT_HD inline void move_window(const gddt_device_layout_t &l, void *typed_buffer, void *packed_buffer, int64_t bytes,
                                bool pack, int lane, int lanes) {
  if (bytes <= 0 || l.size <= 0) return;
  unsigned char *typed = static_cast<unsigned char *>(typed_buffer);
  unsigned char *packed = static_cast<unsigned char *>(packed_buffer);
  int w = l.width;
  while (w > 1 && ((reinterpret_cast<uintptr_t>(typed) | reinterpret_cast<uintptr_t>(packed)) % w) != 0) w /= 2;
  const int64_t words = bytes / w;
  switch (w) {
    case 16:
      move_words<16>(l, typed, packed, words, pack, lane, lanes);
      break;
    case 8:
      move_words<8>(l, typed, packed, words, pack, lane, lanes);
      break;
    case 4:
      move_words<4>(l, typed, packed, words, pack, lane, lanes);
      break;
    case 2:
      move_words<2>(l, typed, packed, words, pack, lane, lanes);
      break;
    default:
      move_words<1>(l, typed, packed, words, pack, lane, lanes);
      break;
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
