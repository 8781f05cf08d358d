/* kernels/half.cuh - the device side of the 16-bit float formats' bit
 * conversions that gen/dtypes.toml's to_compute, from_compute and
 * from_double name (src/cpu/half.h holds the host side, which nvcc does not
 * compile for the device): the same roundings (once, to nearest even), by
 * CUDA's intrinsics, so that a conversion kernel gives the CPU's bits.
 */
#ifndef TENDO_KERNELS_HALF_CUH
#define TENDO_KERNELS_HALF_CUH

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

static __device__ __forceinline__ float tendo__f16_bits_to_f32(uint16_t h) { return __half2float(__ushort_as_half(h)); }
static __device__ __forceinline__ uint16_t tendo__f32_to_f16_bits(float f) { return __half_as_ushort(__float2half_rn(f)); }
static __device__ __forceinline__ uint16_t tendo__f64_to_f16_bits(double d) { return __half_as_ushort(__double2half(d)); }
static __device__ __forceinline__ float tendo__bf16_bits_to_f32(uint16_t h) { return __bfloat162float(__ushort_as_bfloat16(h)); }
static __device__ __forceinline__ uint16_t tendo__f32_to_bf16_bits(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
static __device__ __forceinline__ uint16_t tendo__f64_to_bf16_bits(double d) { return __bfloat16_as_ushort(__double2bfloat16(d)); }

#endif /* TENDO_KERNELS_HALF_CUH */
