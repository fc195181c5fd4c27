/* Times one MPI collective under SMPI, for the spmdsim peer check (tests/smpi_peer_test.cpp).
 *
 *   smpirun ... collective_timing <allreduce|allgather|reduce_scatter> <bytes>
 *
 * <bytes> is the size spmdsim's cost model calls n: the all-reduce vector on every rank, the gathered total
 * of an all-gather (each rank contributes bytes / p), the whole input of a reduce-scatter (each rank keeps
 * bytes / p). Data are float32, so bytes / p must be a multiple of 4.
 *
 * Every rank starts the collective at the same simulated instant: after a barrier the ranks agree on the
 * latest clock among them (the maximum of MPI_Wtime), add a margin far longer than that agreement takes,
 * and sleep until then. (Ranks leave a barrier at different times; a ring started from skewed clocks
 * would time the skew as well.) Rank 0 prints the longest time any rank spent in the call, counted from
 * the agreed start:
 *
 *   collective allreduce ranks 4 bytes 65536 seconds 1.2984200000000241e-05 late 2e-10
 *
 * ("late": how long after the agreed start the latest rank entered the call, a check on the alignment;
 * SMPI sleeps to the nanosecond, so it stays under 0.5 ns.)
 *
 * Buffers come from SMPI_SHARED_MALLOC: all ranks share one set of pages, SMPI skips copying shared data,
 * and the run takes well under a second. The values are garbage; only the timing matters here.
 * The program keeps no global state, so it runs with --cfg=smpi/privatization:no. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SMPI_SHARED_MALLOC
#define ALLOCATE(bytes) SMPI_SHARED_MALLOC(bytes)
#define RELEASE(ptr) SMPI_SHARED_FREE(ptr)
#else
#define ALLOCATE(bytes) malloc(bytes)
#define RELEASE(ptr) free(ptr)
#endif

/* Far longer than the one-double reduce and broadcast that agree on the start time. */
static const double kStartMargin = 1e-3;

static int usage(int rank, const char* program) {
  if (rank == 0)
    fprintf(stderr, "usage: %s <allreduce|allgather|reduce_scatter> <bytes, a multiple of 4 x ranks>\n",
            program);
  return 2;
}

/* Sleeps (in simulated time under SMPI) until the clock reads `when`. */
static void sleep_until(double when) {
  const double wait = when - MPI_Wtime();
  if (wait <= 0) return;
  const long long nanoseconds = llround(wait * 1e9); /* SMPI sleeps to the nanosecond */
  struct timespec span;
  span.tv_sec = (time_t)(nanoseconds / 1000000000LL);
  span.tv_nsec = (long)(nanoseconds % 1000000000LL);
  nanosleep(&span, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  if (argc != 3) {
    MPI_Finalize();
    return usage(rank, argv[0]);
  }
  const char* collective = argv[1];
  const long long bytes = atoll(argv[2]);
  if (bytes <= 0 || bytes % (4LL * size) != 0 ||
      (strcmp(collective, "allreduce") != 0 && strcmp(collective, "allgather") != 0 &&
       strcmp(collective, "reduce_scatter") != 0)) {
    MPI_Finalize();
    return usage(rank, argv[0]);
  }
  const int floats = (int)(bytes / 4);
  const int block = floats / size; /* one rank's piece of an all-gather or reduce-scatter */

  float* send = ALLOCATE((size_t)bytes);
  float* recv = ALLOCATE((size_t)bytes);
  int* counts = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size; ++i) counts[i] = block;

  /* Agree on a common start with MPI_Reduce + MPI_Bcast: they are not the collective under test, so the
     algorithm chosen for it (--cfg=smpi/allreduce:...) never runs on this one-double message. */
  MPI_Barrier(MPI_COMM_WORLD);
  const double now = MPI_Wtime();
  double start = 0;
  MPI_Reduce(&now, &start, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Bcast(&start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  start += kStartMargin;
  sleep_until(start);

  const double late = MPI_Wtime() - start; /* within half a nanosecond of 0 */
  if (strcmp(collective, "allreduce") == 0)
    MPI_Allreduce(send, recv, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  else if (strcmp(collective, "allgather") == 0)
    MPI_Allgather(send, block, MPI_FLOAT, recv, block, MPI_FLOAT, MPI_COMM_WORLD);
  else
    MPI_Reduce_scatter(send, recv, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double elapsed = MPI_Wtime() - start;

  double longest = 0;
  double latest_start = 0;
  MPI_Reduce(&elapsed, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&late, &latest_start, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("collective %s ranks %d bytes %lld seconds %.17g late %.3g\n", collective, size, bytes, longest,
           latest_start);

  free(counts);
  RELEASE(recv);
  RELEASE(send);
  MPI_Finalize();
  return 0;
}
