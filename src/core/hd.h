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

#endif /* TENDO_SRC_HD_H */
