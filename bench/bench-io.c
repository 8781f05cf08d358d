/* bench/bench-io.c - loading a safetensors file to the CPU, timed in
 * process (bench/io.py runs it and compares with the safetensors package).
 *
 *   bench-io FILE [REPEATS]
 *
 * Prints "name seconds" lines, each the best of REPEATS (default 5) runs:
 *   load_get  tendo_safetensors_load + every tensor fetched from the
 *             collection (with mmap, no data is read: near zero)
 *   load_sum  the same, then every element read: tensor_sum_all of each
 *             tensor (the library's reduction, on its threads)
 *   load_sum1 load_sum on one thread
 * then "sum VALUE" (the total of all sums, for checking the other side)
 * and "elements N".
 * The file is expected to hold f32 tensors; others are fetched, not summed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tendo.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One load of path; with sum, every f32 tensor summed into *total.
 * Returns the seconds taken, or -1 on failure (said on stderr). */
static double run(const char *path, bool sum, double *total, int64_t *elements)
{
    double t0 = now(), t;
    tendo_collection *c = tendo_safetensors_load(path, tendo_cpu());
    int64_t n = c ? tendo_collection_count(c) : 0;

    if (!c) {
        fprintf(stderr, "bench-io: %s\n", tendo_error_message(tendo_last_error()));
        return -1;
    }
    *total = 0;
    *elements = 0;
    for (int64_t i = 0; i < n; i++) {
        tendo_tensor *e = tendo_collection_at(c, i);

        *elements += tendo_tensor_numel(e);
        if (sum && tendo_tensor_dtype(e) == TENDO_F32) {
            tensor_f32 *s = tensor_f32_sum_all(tendo_as_f32(e));

            if (!s) {
                fprintf(stderr, "bench-io: %s\n", tendo_error_message(tendo_last_error()));
                tendo_collection_free(c);
                return -1;
            }
            *total += tensor_f32_data(s)[0];
            tensor_f32_free(s);
        }
    }
    tendo_collection_free(c);
    t = now() - t0;
    return t;
}

static double best(const char *path, bool sum, int repeats, double *total, int64_t *elements)
{
    double b = 1e300;

    for (int r = 0; r < repeats; r++) {
        double t = run(path, sum, total, elements);

        if (t < 0)
            exit(1);
        b = t < b ? t : b;
    }
    return b;
}

int main(int argc, char **argv)
{
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    double total = 0, t_get, t_sum, t_sum1;
    int64_t elements = 0;

    if (argc < 2 || repeats < 1) {
        fprintf(stderr, "usage: bench-io FILE [REPEATS]\n");
        return 2;
    }
    t_get = best(argv[1], false, repeats, &total, &elements);
    t_sum = best(argv[1], true, repeats, &total, &elements);
    tendo_set_num_threads(1);
    t_sum1 = best(argv[1], true, repeats, &total, &elements);
    printf("load_get %.6f\nload_sum %.6f\nload_sum1 %.6f\nsum %.9g\nelements %lld\n", t_get, t_sum, t_sum1, total,
           (long long)elements);
    return 0;
}
