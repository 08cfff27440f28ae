/*
 * An ordinary MPI program: packs and unpacks a vector and checks the bytes. Built twice: linked
 * with MPI only (gddt arrives through LD_PRELOAD, or not at all) and linked with gddt before
 * MPI. With --expect-gddt it also checks that gddt is in the process and that the MPI_Pack
 * and MPI_Unpack this program calls are gddt's; with --expect-no-gddt, that gddt is absent.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { kRows = 5, kColumns = 3, kPacked = kRows * sizeof(double) };

/* The shared object that defines `symbol` as this program sees it, or "?" */
static const char *provider_of(const char *symbol) {
  Dl_info info;
  void *address = dlsym(RTLD_DEFAULT, symbol);
  if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL) return "?";
  return info.dli_fname;
}

static int check_gddt_presence(int expect_gddt) {
  typedef const char *(*version_fn)(void);
  version_fn version = (version_fn)dlsym(RTLD_DEFAULT, "gddt_version_string");
  const char *pack_provider = provider_of("MPI_Pack");
  const char *unpack_provider = provider_of("MPI_Unpack");
  printf("preload: gddt %s; MPI_Pack from %s; MPI_Unpack from %s\n", version ? version() : "absent",
         pack_provider, unpack_provider);
  if (expect_gddt == 0) {
    if (version == NULL) return 0;
    printf("preload: FAIL: gddt is loaded but should not be\n");
    return 1;
  }
  if (version == NULL) {
    printf("preload: FAIL: gddt_version_string not found: gddt was not loaded\n");
    return 1;
  }
  if (strstr(pack_provider, "libgddt") == NULL || strstr(unpack_provider, "libgddt") == NULL) {
    printf("preload: FAIL: MPI_Pack/MPI_Unpack do not resolve to gddt\n");
    return 1;
  }
  return 0;
}

/* One column of a row-major kRows x kColumns matrix, packed and unpacked into another. */
static int check_vector_round_trip(void) {
  double matrix[kRows][kColumns], copy[kRows][kColumns];
  unsigned char packed[kPacked + 8];
  MPI_Datatype column;
  int position = 0, failures = 0;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kColumns; ++c) {
      matrix[r][c] = r * 10.0 + c;
      copy[r][c] = -1.0;
    }
  memset(packed, 0xA5, sizeof packed);
  MPI_Type_vector(kRows, 1, kColumns, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);

  if (MPI_Pack(&matrix[0][1], 1, column, packed, (int)sizeof packed, &position, MPI_COMM_WORLD) != MPI_SUCCESS ||
      position != kPacked) {
    printf("preload: FAIL: MPI_Pack ended at %d, want %d\n", position, kPacked);
    ++failures;
  }
  for (int r = 0; r < kRows; ++r) {
    double value;
    memcpy(&value, packed + r * sizeof(double), sizeof value);
    if (value != matrix[r][1]) {
      printf("preload: FAIL: packed element %d is %g, want %g\n", r, value, matrix[r][1]);
      ++failures;
    }
  }
  for (size_t i = kPacked; i < sizeof packed; ++i)
    if (packed[i] != 0xA5) {
      printf("preload: FAIL: MPI_Pack wrote byte %zu past the packed data\n", i);
      ++failures;
    }

  position = 0;
  if (MPI_Unpack(packed, kPacked, &position, &copy[0][1], 1, column, MPI_COMM_WORLD) != MPI_SUCCESS ||
      position != kPacked) {
    printf("preload: FAIL: MPI_Unpack ended at %d, want %d\n", position, kPacked);
    ++failures;
  }
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kColumns; ++c) {
      const double want = c == 1 ? matrix[r][c] : -1.0;
      if (copy[r][c] != want) {
        printf("preload: FAIL: unpacked [%d][%d] is %g, want %g\n", r, c, copy[r][c], want);
        ++failures;
      }
    }
  MPI_Type_free(&column);
  return failures;
}

int main(int argc, char **argv) {
  int expect_gddt = -1; /* -1: no expectation */
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--expect-gddt") == 0) expect_gddt = 1;
    if (strcmp(argv[i], "--expect-no-gddt") == 0) expect_gddt = 0;
  }
  int failures = expect_gddt >= 0 ? check_gddt_presence(expect_gddt) : 0;
  failures += check_vector_round_trip();
  printf("preload: %s\n", failures == 0 ? "PASS" : "FAIL");
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
