// Boxes of a 3-D C-order array (the last index fastest): the halo regions of the 3-D stencil and
// the blocks of the FFT transposes. The gddt versions describe a box as a subarray datatype
// (subarray.cpp), the hand-written ones pack and unpack lists of boxes with one kernel each
// (box_copy.cpp), so both move exactly the same elements.
#pragma once

#include "hd.hpp"

namespace apps {

// Three extents or indices, slowest axis first; usable in kernels (std::array is not, without
// nvcc's relaxed constexpr).
struct Extent {
  int n[3];
  APPS_HD int operator[](int axis) const { return n[axis]; }
  APPS_HD int& operator[](int axis) { return n[axis]; }
  const int* data() const { return n; }
};

struct Box {
  Extent start{};
  Extent size{};
  long long count() const { return static_cast<long long>(size[0]) * size[1] * size[2]; }
};

// The boxes one fused kernel moves, back to back in the packed buffer: box b's elements, in C
// order, start at element offset[b].
constexpr int kMaxBoxes = 32;
struct BoxList {
  int count = 0;
  Box boxes[kMaxBoxes];
  long long offset[kMaxBoxes + 1] = {0};

  void add(const Box& box) {
    boxes[count] = box;
    offset[count + 1] = offset[count] + box.count();
    ++count;
  }
  long long elements() const { return offset[count]; }
};

}  // namespace apps
