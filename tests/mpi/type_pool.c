/*
 * An ordinary MPI program that keeps a pool of datatypes: each round builds a random type over
 * earlier ones (vector, hvector, indexed, struct, subarray, resized, dup), commits it, describes
 * it through MPI_Type_get_contents (freeing the references that returns, as MPI-4.0 5.1.13
 * asks), packs 1-3 elements, and frees it while its building blocks stay in the pool, each
 * committed when made; now and then a pool type is packed itself. Half the types are committed
 * through PMPI_Type_commit, out of an interposer's sight, as a library layered under the
 * program would (the handles of freed types come back to them too). The library hands the handles of freed types
 * to new ones, and MPICH returns a type's own handle from get_contents: every MPI_Pack must
 * still succeed and move count x MPI_Type_size bytes. Run with gddt linked or preloaded and
 * GDDT_PACK_HOST=gddt (MPICH 4.0.2 alone miscounts some of these packs itself).
 *
 * Usage: test_type_pool [rounds] [seed]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kPoolMax = 4096, kBuffer = 1 << 20, kMaxSize = 4096 };

static MPI_Datatype pool[kPoolMax];
static int pool_size;
static unsigned long long state;

static int random_below(int n) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return (int)((state >> 33) % (unsigned long long)n);
}

static MPI_Datatype any_type(void) {
  static const MPI_Datatype named[] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_FLOAT, MPI_DOUBLE,
                                       MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_2INT};
  if (pool_size > 0 && random_below(3) != 0) return pool[random_below(pool_size)];
  return named[random_below((int)(sizeof named / sizeof named[0]))];
}

static MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  return extent > 0 ? extent : 1;
}

static MPI_Datatype new_type(void) {
  MPI_Datatype inner = any_type(), made = MPI_DATATYPE_NULL;
  const MPI_Aint extent = extent_of(inner);
  switch (random_below(9)) {
    case 0:
      MPI_Type_contiguous(1 + random_below(4), inner, &made);
      break;
    case 1:
      MPI_Type_vector(1 + random_below(3), 1 + random_below(2), 2 + random_below(3), inner, &made);
      break;
    case 2:
      MPI_Type_create_hvector(1 + random_below(3), 1, 2 * extent + 4, inner, &made);
      break;
    case 3: {
      int lengths[2] = {1, random_below(3)};
      MPI_Aint displacements[2] = {0, 3 * extent + 8};
      MPI_Datatype types[2] = {inner, any_type()};
      MPI_Type_create_struct(2, lengths, displacements, types, &made);
      break;
    }
    case 4: {
      int lengths[2] = {1, 2}, displacements[2] = {0, 3};
      MPI_Type_indexed(2, lengths, displacements, inner, &made);
      break;
    }
    case 5: {
      int sizes[2] = {4, 5}, subsizes[2] = {2, 3}, starts[2] = {1, 1};
      MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, inner, &made);
      break;
    }
    case 6:
      MPI_Type_dup(inner, &made);
      break;
    case 7: { /* a struct with an empty member, which Open MPI bounds by its displacement */
      MPI_Datatype empty = MPI_DATATYPE_NULL;
      MPI_Type_contiguous(0, MPI_LONG, &empty);
      int lengths[2] = {1, random_below(3)};
      MPI_Aint displacements[2] = {8 * random_below(3), 8 * (random_below(64) - 32)};
      MPI_Datatype types[2] = {inner, empty};
      MPI_Type_create_struct(2, lengths, displacements, types, &made);
      MPI_Type_free(&empty);
      break;
    }
    default:
      MPI_Type_create_resized(inner, 0, extent + 8, &made);
      break;
  }
  return made;
}

static void commit(MPI_Datatype *type) {
  if (random_below(2))
    MPI_Type_commit(type);
  else
    PMPI_Type_commit(type);
}

static int is_derived(MPI_Datatype type) {
  int integers, addresses, datatypes, combiner;
  MPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner);
  return combiner != MPI_COMBINER_NAMED;
}

/* Frees every derived reference MPI_Type_get_contents returns, all the way down. */
static void describe(MPI_Datatype type) {
  int integers, addresses, datatypes, combiner;
  MPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return;
  int *ints = malloc(sizeof(int) * (size_t)(integers + 1));
  MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(addresses + 1));
  MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(datatypes + 1));
  MPI_Type_get_contents(type, integers, addresses, datatypes, ints, aints, types);
  for (int i = 0; i < datatypes; ++i) {
    describe(types[i]);
    if (is_derived(types[i])) MPI_Type_free(&types[i]);
  }
  free(ints);
  free(aints);
  free(types);
}

/* 0 when MPI_Pack of 1-3 elements succeeds and moves count x size bytes (or the type is too
 * large or low for the buffer and is skipped). */
static int pack_checked(MPI_Datatype type, long round, const char *what) {
  static char in[kBuffer], out[kBuffer];
  int size = 0;
  MPI_Aint true_lb = 0, true_extent = 0, lb = 0, extent = 0;
  MPI_Type_size(type, &size);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  MPI_Type_get_extent(type, &lb, &extent);
  const int count = 1 + random_below(3);
  if (size > kMaxSize || true_lb < -kBuffer / 4 || true_lb + true_extent + 3 * extent > kBuffer / 4) return 0;
  int position = 0;
  const int rc = MPI_Pack(in + kBuffer / 2, count, type, out, kBuffer, &position, MPI_COMM_WORLD);
  if (rc == MPI_SUCCESS && position == count * size) return 0;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  printf("type_pool: FAIL round %ld, %s: MPI_Pack of %d returned \"%s\", moved %d bytes of %d\n", round, what, count,
         rc == MPI_SUCCESS ? "success" : text, position, count * size);
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const long rounds = argc > 1 ? atol(argv[1]) : 20000;
  state = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
  long failures = 0, packs = 0;
  for (long round = 0; round < rounds; ++round) {
    MPI_Datatype outer = new_type();
    MPI_Datatype block = new_type();
    commit(&block); /* committed once, when made: packed later as it is */
    if (pool_size < kPoolMax)
      pool[pool_size++] = block;
    else
      MPI_Type_free(&block);
    commit(&outer);
    describe(outer);
    failures += pack_checked(outer, round, "a new type");
    MPI_Type_free(&outer);
    if (random_below(4) == 0) {
      failures += pack_checked(pool[random_below(pool_size)], round, "a type of the pool");
      ++packs;
    }
    ++packs;
  }
  for (int i = 0; i < pool_size; ++i) MPI_Type_free(&pool[i]);
  printf("type_pool: %ld rounds, %ld packs, %ld failed\n", rounds, packs, failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
