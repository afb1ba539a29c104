/* Two ranks that talk over Open MPI's shared-memory BTL, then wait: OpenMpiClientTest. Each rank
 * prints "ready <rank> <pid>" once the first message went through. Rank 0 waits for its stdin
 * (mpirun forwards the job's) to close, then tells rank 1, and both finish cleanly. Rank 1 polls
 * every 100 ms rather than spinning in a blocking receive. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, token = 0, flag = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    token = 42;
    MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  printf("ready %d %d\n", rank, (int) getpid());
  fflush(stdout);
  if (rank == 0) {
    char buf[64];
    while (read(0, buf, sizeof buf) > 0) {
    }
    MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
  } else {
    while (!flag) {
      MPI_Iprobe(0, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if (!flag) {
        usleep(100000);
      }
    }
    MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
