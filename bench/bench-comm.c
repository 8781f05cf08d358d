/* bench/bench-comm.c - all_reduce between processes against plain MPI.
 *
 *   mpirun -np 2 bench/bench-comm [MAX_BYTES]      (make bench-comm)
 *
 * For buffers of 1 KiB to MAX_BYTES (default 256 MiB), x4 each step, times
 * in interleaved rounds, each round one call of each in an order that
 * rotates from round to round (so that none always follows the same one),
 * each call timed from a barrier (as the OSU benchmarks time theirs), so
 * that none starts with the skew between the ranks that the one before
 * left:
 *   mpi       MPI_Allreduce(MPI_IN_PLACE, f32 SUM) on a plain buffer;
 *   tendo     tensor_f32_all_reduce(SUM) on a tensor of the same bytes
 *             (the ranks' agreement included);
 *   bf16      tensor_bf16_all_reduce(SUM) on a tensor of the same bytes
 *             (twice the elements: reduced in float by tendo).
 * Run it again with TENDO_COMM_CHECK=0 to see tendo without the ranks'
 * agreement before each call (include/tendo/comm.h).
 * Prints, per size, the bus bandwidth (bytes x 2 (n - 1) / n / time,
 * NCCL's convention) of each at its median call (each round's time the
 * slowest rank's), the ratios of bytes per second tendo/mpi, bf16/tendo
 * and bf16/mpi (MPI has no bf16: its f32 on the same bytes is the plain
 * reference there), and tendo/mpi of the best calls.  The median, as the
 * OSU benchmarks' mean, is what a call costs; a best of 200 calls of a
 * microsecond is one lucky call, and moved by 5 % from run to run here.
 * Rank 0 prints.  Not a test.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tendo.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of t[0..n) (sorted in place), and its least in *best. */
static double median_of(double *t, int n, double *best)
{
    qsort(t, (size_t)n, sizeof *t, by_value);
    *best = t[0];
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    tendo_comm *c = tendo_comm_world();
    size_t max_bytes = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)256 << 20;
    int rank, size;

    if (!c) {
        fprintf(stderr, "bench-comm: %s\n", tendo_error_message(tendo_last_error()));
        return 1;
    }
    rank = tendo_comm_rank(c);
    size = tendo_comm_size(c);
    if (size < 2) {
        fprintf(stderr, "bench-comm: run it under mpirun -np 2 (or more)\n");
        tendo_comm_free(c);
        return 1;
    }
    if (rank == 0)
        printf("# all_reduce SUM, %d ranks%s; bus bandwidth GB/s (the median call of the rounds; last column:\n"
               "# tendo/mpi of the best calls)\n"
               "%10s %10s %10s %10s %10s %10s %10s %10s\n",
               size, getenv("TENDO_COMM_CHECK") && !strcmp(getenv("TENDO_COMM_CHECK"), "0")
                         ? ", TENDO_COMM_CHECK=0 (no agreement before each call)" : "",
               "bytes", "mpi", "tendo", "bf16", "tendo/mpi", "bf16/tendo", "bf16/mpi", "best t/m");
    for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        int64_t n = (int64_t)(bytes / 4), n16 = (int64_t)(bytes / 2);
        int rounds = bytes <= ((size_t)1 << 20) ? 200 : bytes <= ((size_t)16 << 20) ? 20 : 5;
        float *plain = malloc(bytes);
        tensor_f32 *t = tensor_f32_full(1, &n, 1.0 / size, tendo_cpu());
        tensor_bf16 *h = tensor_bf16_full(1, &n16, 1.0 / size, tendo_cpu());
        double *tm = malloc(3 * (size_t)rounds * sizeof *tm), bw[3], best[3];

        if (!plain || !t || !h || !tm) {
            fprintf(stderr, "bench-comm: out of memory at %zu bytes\n", bytes);
            return 1;
        }
        for (int64_t i = 0; i < n; i++)
            plain[i] = 1.0f / (float)size;
        for (int r = -3; r < rounds; r++) { /* three rounds of warm-up */
            for (int j = 0; j < 3; j++) {
                int k = (j + (r + 3)) % 3; /* the order rotates round by round */
                double t0;
                tendo_status st = TENDO_OK;

                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
                if (k == 0)
                    MPI_Allreduce(MPI_IN_PLACE, plain, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                else
                    st = k == 1 ? tensor_all_reduce(c, t, TENDO_REDUCE_SUM) : tensor_all_reduce(c, h, TENDO_REDUCE_SUM);
                t0 = MPI_Wtime() - t0;
                if (st != TENDO_OK)
                    return fprintf(stderr, "bench-comm: %s\n", tendo_error_message(tendo_last_error())), 1;
                if (r >= 0)
                    tm[k * rounds + r] = t0;
            }
        }
        /* every rank's slowest time of each round is what the job saw */
        MPI_Allreduce(MPI_IN_PLACE, tm, 3 * rounds, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int k = 0; k < 3; k++) {
            bw[k] = (double)bytes * 2.0 * (size - 1) / size / median_of(tm + k * rounds, rounds, &best[k]) / 1e9;
            best[k] = (double)bytes * 2.0 * (size - 1) / size / best[k] / 1e9;
        }
        if (rank == 0)
            printf("%10zu %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", bytes, bw[0], bw[1], bw[2], bw[1] / bw[0],
                   bw[2] / bw[1], bw[2] / bw[0], best[1] / best[0]);
        fflush(stdout);
        free(tm);
        free(plain);
        tensor_free(t);
        tensor_free(h);
    }
    tendo_comm_free(c);
    return 0;
}
