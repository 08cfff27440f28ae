#include "box_copy.hpp"

#include <cstdint>

#include "parallel.hpp"

namespace apps {
namespace {

// A thread per packed element: it finds its box (a short scan: the lists hold a few dozen at
// most) and the element's place in the array. `Pack` says which way the element goes.
template <bool Pack, int Words>
struct BoxCopy {
  std::uint64_t* array;
  std::uint64_t* packed;
  Extent dims;
  BoxList list;

  APPS_HD void operator()(long long i) const {
    int b = 0;
    while (i >= list.offset[b + 1]) ++b;
    const Box& box = list.boxes[b];
    long long e = i - list.offset[b];
    const long long c = e % box.size[2];
    e /= box.size[2];
    const long long row = e % box.size[1], plane = e / box.size[1];
    const long long at =
        ((box.start[0] + plane) * dims[1] + box.start[1] + row) * static_cast<long long>(dims[2]) + box.start[2] + c;
    for (int w = 0; w < Words; ++w) {
      if (Pack)
        packed[i * Words + w] = array[at * Words + w];
      else
        array[at * Words + w] = packed[i * Words + w];
    }
  }
};

template <bool Pack>
void copy_boxes(void* array, const Extent& dims, const BoxList& list, void* packed, int element_bytes) {
  auto* a = static_cast<std::uint64_t*>(array);
  auto* p = static_cast<std::uint64_t*>(packed);
  if (element_bytes == 16)
    for_each(list.elements(), BoxCopy<Pack, 2>{a, p, dims, list});
  else
    for_each(list.elements(), BoxCopy<Pack, 1>{a, p, dims, list});
}

}  // namespace

void pack_boxes(const void* array, const Extent& dims, const BoxList& boxes, void* packed, int element_bytes) {
  copy_boxes<true>(const_cast<void*>(array), dims, boxes, packed, element_bytes);
}

void unpack_boxes(void* array, const Extent& dims, const BoxList& boxes, const void* packed, int element_bytes) {
  copy_boxes<false>(array, dims, boxes, const_cast<void*>(packed), element_bytes);
}

}  // namespace apps
