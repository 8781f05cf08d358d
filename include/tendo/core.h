/* tendo/core.h - the dtype-independent part of tendo's public API.
 *
 * Devices, errors, the 16- and 8-bit float element types and their exact
 * conversions.
 * Users include <tendo.h>, which includes this header; it is installed as
 * <tendo/core.h>.  Everything here is plain C11: no CUDA types.
 */
#ifndef TENDO_CORE_H
#define TENDO_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TENDO_API __attribute__((visibility("default")))
#else
#define TENDO_API
#endif

/* ---- element types ---------------------------------------------------- */

/* Distinct structs, so a raw f16 buffer cannot be passed as a bf16 one. */
typedef struct { uint16_t bits; } tendo_f16;
typedef struct { uint16_t bits; } tendo_bf16;

/* Exact widening conversions (every f16/bf16 value is a float). */
TENDO_API float tendo_f16_to_f32(tendo_f16 h);
TENDO_API float tendo_bf16_to_f32(tendo_bf16 h);
/* Narrowing conversions: round to nearest, ties to even; overflow gives
 * infinity, subnormals are kept (no flush to zero), NaN stays NaN with its
 * sign, quiet bit set and the top payload bits kept, like F16C hardware. */
TENDO_API tendo_f16  tendo_f32_to_f16(float f);
TENDO_API tendo_bf16 tendo_f32_to_bf16(float f);
/* From double, rounded once (no double rounding through float). */
TENDO_API tendo_f16  tendo_f64_to_f16(double d);
TENDO_API tendo_bf16 tendo_f64_to_bf16(double d);

/* The OCP 8-bit floats: f8e4m3 is E4M3 "fn" (max 448, no infinity, NaN is
 * S.1111.111), f8e5m2 is IEEE-like E5M2 (max 57344, infinities, NaNs).
 * Conversions agree bit for bit with Python's ml_dtypes (float8_e4m3fn,
 * float8_e5m2): round to nearest even, subnormals kept; past the largest
 * finite value (and from +-infinity) e4m3 gives NaN and e5m2 infinity,
 * sign kept; a NaN gives the canonical NaN (e4m3 0x7f, e5m2 0x7e) with its
 * sign, and widens to the quiet float NaN with its sign. */
typedef struct { uint8_t bits; } tendo_f8e4m3;
typedef struct { uint8_t bits; } tendo_f8e5m2;

/* The f32 value of h (exact). */
TENDO_API float        tendo_f8e4m3_to_f32(tendo_f8e4m3 h);
/* The f8e4m3 nearest to f. */
TENDO_API tendo_f8e4m3 tendo_f32_to_f8e4m3(float f);
/* The f32 value of h (exact). */
TENDO_API float        tendo_f8e5m2_to_f32(tendo_f8e5m2 h);
/* The f8e5m2 nearest to f. */
TENDO_API tendo_f8e5m2 tendo_f32_to_f8e5m2(float f);
/* The f8e4m3 nearest to d, rounded once (not through float). */
TENDO_API tendo_f8e4m3 tendo_f64_to_f8e4m3(double d);
/* The f8e5m2 nearest to d, rounded once (not through float). */
TENDO_API tendo_f8e5m2 tendo_f64_to_f8e5m2(double d);

/* ---- devices ---------------------------------------------------------- */

typedef enum { TENDO_CPU, TENDO_CUDA } tendo_device_type;
typedef struct { tendo_device_type type; int index; } tendo_device;

/* The host CPU (index 0). */
TENDO_API tendo_device tendo_cpu(void);
/* CUDA device `index`; not checked here: functions that take a device
 * refuse one that does not exist with TENDO_ERR_DEVICE. */
TENDO_API tendo_device tendo_cuda(int index);
/* True when this build has CUDA and a driver with at least one GPU;
 * never an error. */
TENDO_API bool tendo_cuda_available(void);
/* Number of usable CUDA devices (0 without CUDA). */
TENDO_API int tendo_cuda_device_count(void);

/* Autograd's grad mode for the calling thread (on until set off): off,
 * nothing is recorded (torch.no_grad).  Returns the previous setting. */
TENDO_API bool tendo_set_grad_enabled(bool on);
/* The calling thread's grad mode. */
TENDO_API bool tendo_is_grad_enabled(void);
/* "cpu", "cuda:0", ...; the string is static or thread-local and stays
 * valid until at least 7 further calls from the same thread. */
TENDO_API const char *tendo_device_str(tendo_device d);
/* True when a and b name the same device. */
TENDO_API bool tendo_device_equal(tendo_device a, tendo_device b);

/* ---- errors ----------------------------------------------------------- */

#define TENDO_STATUS_MAP(X)                                   \
    X(TENDO_OK, "ok")                                         \
    X(TENDO_ERR_INVALID_ARG, "invalid argument")              \
    X(TENDO_ERR_SHAPE, "shape error")                         \
    X(TENDO_ERR_DTYPE, "dtype error")                         \
    X(TENDO_ERR_DEVICE, "device error")                       \
    X(TENDO_ERR_DEVICE_MISMATCH, "device mismatch")           \
    X(TENDO_ERR_OOM, "out of memory")                         \
    X(TENDO_ERR_CUDA, "CUDA error")                           \
    X(TENDO_ERR_IO, "I/O error")                              \
    X(TENDO_ERR_FORMAT, "format error")                       \
    X(TENDO_ERR_UNSUPPORTED, "unsupported")                   \
    X(TENDO_ERR_COMM, "communication error")

typedef enum {
#define TENDO__STATUS_ENUM(name, str) name,
    TENDO_STATUS_MAP(TENDO__STATUS_ENUM)
#undef TENDO__STATUS_ENUM
} tendo_status;

typedef struct tendo_error tendo_error;

/* The last failure on the calling thread (a successful call does not clear
 * it).  Never NULL: before any failure it reports TENDO_OK and "no error".
 * The pointer is owned by tendo and valid for the thread's lifetime. */
TENDO_API const tendo_error *tendo_last_error(void);
/* The kind of error e describes (TENDO_OK for NULL). */
TENDO_API tendo_status tendo_error_status(const tendo_error *e);
/* "op: what went wrong", e.g. "add: shapes [3,4] and [2,4] cannot
 * broadcast"; owned by e. */
TENDO_API const char *tendo_error_message(const tendo_error *e);
/* The name of the operation that failed ("" when none); owned by e. */
TENDO_API const char *tendo_error_op(const tendo_error *e);
/* A short static name for a status, e.g. "shape error". */
TENDO_API const char *tendo_status_str(tendo_status s);
/* Resets the calling thread's last error to TENDO_OK. */
TENDO_API void tendo_clear_error(void);

/* CUDA device index's name (copied into name, n bytes with the NUL, when
 * name is not NULL) and its total and currently free memory in bytes (each
 * when not NULL).  TENDO_ERR_DEVICE for an index that is not a usable
 * device (any index in a build without CUDA), TENDO_ERR_CUDA on a failed
 * query; the calling thread's current CUDA device is left as it was. */
TENDO_API tendo_status tendo_cuda_device_info(int index, char *name, size_t n, size_t *total_bytes,
                                              size_t *free_bytes);
/* Waits until all work queued on d (by any thread) is done: CUDA ops are
 * asynchronous, except those that return data to the host (copy_to, to the
 * CPU).  Hand a CUDA tensor to another thread after a tendo_sync.  TENDO_OK
 * on the CPU; TENDO_ERR_DEVICE for a device that does not exist. */
TENDO_API tendo_status tendo_sync(tendo_device d);
/* Whether f32 matmuls on CUDA may use TF32 tensor cores (10-bit mantissa
 * products, f32 accumulation); off by default. */
TENDO_API void tendo_set_allow_tf32(bool allow);
TENDO_API bool tendo_get_allow_tf32(void);

/* ---- shapes ----------------------------------------------------------- */

#define TENDO_MAX_DIMS 8

#define TENDO__NARGS(...) TENDO__NARGS_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TENDO__NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, n, ...) n
/* TENDO_SHAPE(2, 3, 4) expands to the pair  3, (const int64_t[]){2, 3, 4}
 * for the (int ndim, const int64_t *shape) parameters. */
#define TENDO_SHAPE(...) TENDO__NARGS(__VA_ARGS__), (const int64_t[]){__VA_ARGS__}

/* ---- memory pool -------------------------------------------------------- */

/* Per device.  Byte counts are of the pool's blocks (requests rounded up to
 * a multiple of 512 bytes); "cached" is memory the pool holds from the
 * device but no tensor uses. */
typedef struct {
    int64_t allocations, deallocations, bytes_in_use, bytes_cached, peak_bytes_in_use, hits, misses;
} tendo_pool_stats;

/* The statistics of d's pool (all zero for a device without one). */
TENDO_API tendo_pool_stats tendo_pool_get_stats(tendo_device d);
/* Gives every wholly unused segment of d's pool back to the device. */
TENDO_API void tendo_pool_empty_cache(tendo_device d);
/* Restarts peak_bytes_in_use of d's pool from the bytes in use now. */
TENDO_API void tendo_pool_reset_peak(tendo_device d);

/* ---- threads ------------------------------------------------------------ */

/* Threads that CPU ops use above a size threshold (OpenMP); n <= 0 restores
 * the default (the OpenMP default, usually the number of cores).  Results
 * are identical for any count.  Without OpenMP, always 1. */
TENDO_API void tendo_set_num_threads(int n);
/* The number of threads CPU ops use. */
TENDO_API int tendo_get_num_threads(void);

/* ---- testing ------------------------------------------------------------ */

/* For tests: the n-th allocation the library makes from now on (host or
 * device memory, storage or bookkeeping) fails as out of memory; 0 turns
 * it off.  Process-wide and thread-safe; only that one allocation fails. */
TENDO_API void tendo_fault_inject_alloc(int64_t n);

/* ---- library information ---------------------------------------------- */

/* The library's version string, e.g. "0.1.0". Static. */
TENDO_API const char *tendo_version(void);
/* The CPU features the kernels dispatch to, e.g. "avx2 fma f16c", or
 * "portable"; with "(TENDO_CPU=...)" when that environment variable capped
 * them ("portable", "avx2", "avx512" or "avx512bf16": how tests run the
 * lower paths on a newer CPU).  Static. */
TENDO_API const char *tendo_cpu_features(void);
/* How this build was configured, e.g. "blas=cblas openmp=yes events=yes
 * cuda=no". Static. */
TENDO_API const char *tendo_build_options(void);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_CORE_H */
