/* A program built against an installed gddt: it must find the headers (including <mpi.h>
 * through gddt_mpi.h), link libgddt.so and run. */
#include <stdio.h>

#include <gddt/gddt.h>
#include <gddt/gddt_mpi.h>

int main(void) {
  double value = 0;
  gddt_memory_type_t type;
  int device;
  if (gddt_memory_classify(&value, &type, &device) != GDDT_OK) return 1;
  if (gddt_status_to_mpi_error(GDDT_OK) != MPI_SUCCESS) return 1;
  printf("consumer: gddt %s, a stack address is %s memory\n", gddt_version_string(), gddt_memory_type_name(type));
  return 0;
}
