/* MPI_Pack after MPI_Finalize: an erroneous call, which the MPI library reports in its own
   words, naming MPI_Pack, not some call gddt would make inside it. The test passes on what the
   library prints (it aborts the process). */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  int in[4] = {1, 2, 3, 4}, position = 0;
  char out[64];
  return MPI_Pack(in, 4, MPI_INT, out, sizeof out, &position, MPI_COMM_WORLD) == MPI_SUCCESS ? 2 : 0;
}
