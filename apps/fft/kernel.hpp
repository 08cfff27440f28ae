// The FFT array's values where they live (kernel.cpp): every element a complex double that names
// its global index, so any pencil's expected contents can be written out and compared.
#pragma once

#include "pencils.hpp"

namespace fft {

void fill_pencil(const Pencil& pencil, int n, void* array);  // not waited for

}  // namespace fft
