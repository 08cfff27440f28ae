#include "subarray.hpp"

namespace apps {

MPI_Datatype subarray(const Extent& dims, const Box& box, MPI_Datatype element) {
  MPI_Datatype type;
  MPI_Type_create_subarray(3, dims.data(), box.size.data(), box.start.data(), MPI_ORDER_C, element, &type);
  MPI_Type_commit(&type);
  return type;
}

}  // namespace apps
