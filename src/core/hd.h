/* src/core/hd.h - TENDO_HD marks functions that compile for both the host and,
 * under nvcc, the device (headers shared with CUDA kernels). */
#ifndef TENDO_SRC_HD_H
#define TENDO_SRC_HD_H

#ifndef TENDO_HD
#ifdef __CUDACC__
#define TENDO_HD __host__ __device__
#else
#define TENDO_HD
#endif
#endif

/* TENDO_HD_NOINLINE: the same, kept out of line on the device, for a heavy
 * helper that inlined would take a kernel past the register file. */
#ifndef TENDO_HD_NOINLINE
#ifdef __CUDACC__
#define TENDO_HD_NOINLINE __host__ __device__ __noinline__
#else
#define TENDO_HD_NOINLINE inline
#endif
#endif

#endif /* TENDO_SRC_HD_H */
