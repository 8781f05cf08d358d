/* tendo/dlpack.h - tensors to and from other frameworks through DLPack,
 * without copying.  Not included by <tendo.h>: include it where needed.
 *
 * The first half declares the DLPack 1.x C ABI (DLManagedTensorVersioned
 * and the legacy DLManagedTensor), written from the DLPack specification,
 * because the dlpack.h that distributions ship may predate 1.0.  It uses the
 * upstream header's include guard, so it steps aside for a 1.x
 * <dlpack/dlpack.h> included first (and that one for it), and refuses to
 * build after a 0.x one, whose DLManagedTensor has no versioned sibling.
 *
 * The second half is tendo's side.  Export hands out a tensor another
 * framework borrows until it calls the deleter; import wraps another
 * framework's tensor as a tendo_tensor that calls the deleter when its last
 * view is freed.  In both directions the elements are shared, never copied.
 */
#ifndef TENDO_DLPACK_H
#define TENDO_DLPACK_H

#include <stddef.h>
#include <stdint.h>

#include "tendo/erased.h"

/* ---- the DLPack ABI ------------------------------------------------------ */

#ifdef DLPACK_DLPACK_H_
/* Someone else's dlpack.h came first: usable only if it is 1.x. */
#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION != 1
#error "tendo/dlpack.h needs DLPack 1.x, but a dlpack.h of another version came first (0.x has no DLManagedTensorVersioned)"
#endif
#else /* !DLPACK_DLPACK_H_ */
#define DLPACK_DLPACK_H_

/* The version of the ABI declared here; a tensor's major version must be 1,
 * its minor version may be anything (minor versions only add codes). */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1

#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#ifndef DLPACK_DLL
#define DLPACK_DLL
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t major; /* a different major version is a different layout */
    uint32_t minor;
} DLPackVersion;

/* Where the memory is (the values are the specification's). */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,   /* pinned host memory (cudaMallocHost) */
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,  /* pinned host memory (hipMallocHost) */
    kDLExtDev = 12,
    kDLCUDAManaged = 13, /* unified memory (cudaMallocManaged) */
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
    kDLMAIA = 17,
    kDLTrn = 18,
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id; /* 0 for host, pinned and managed memory */
} DLDevice;

/* Kinds of element; with DLDataType.bits they name a type (kDLFloat with
 * 16 bits is IEEE half, kDLBfloat with 16 bits is bfloat16). */
typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U,
    kDLBool = 6U,
    kDLFloat8_e3m4 = 7U,
    kDLFloat8_e4m3 = 8U,
    kDLFloat8_e4m3b11fnuz = 9U,
    kDLFloat8_e4m3fn = 10U,
    kDLFloat8_e4m3fnuz = 11U,
    kDLFloat8_e5m2 = 12U,
    kDLFloat8_e5m2fnuz = 13U,
    kDLFloat8_e8m0fnu = 14U,
    kDLFloat6_e2m3fn = 15U,
    kDLFloat6_e3m2fn = 16U,
    kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

/* An element type: code (a DLDataTypeCode), bits per lane, and lanes (1
 * for scalars, more for vector types).  Native byte order. */
typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

/* A tensor that owns nothing.  Element i (a multi-index) lies at
 * (char *)data + byte_offset + sum(i[k] * strides[k]) * bits / 8;
 * strides count elements and may be NULL (row-major) only for legacy
 * producers. */
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;

/* The pre-1.0 exchange struct, still accepted everywhere.  The consumer
 * calls deleter(self) once when done (deleter may be NULL); it frees self. */
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

/* DLManagedTensorVersioned.flags bits. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)  /* the consumer must not write */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)  /* the producer made a copy for the consumer */
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL) /* fp4/fp6 one per byte */

/* The DLPack 1.x exchange struct.  Everything before dl_tensor keeps its
 * place in every 1.x and later version, so that the deleter can always be
 * called. */
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_DLPACK_H_ */

/* ---- tendo's side -------------------------------------------------------- */

#ifdef __cplusplus
extern "C" {
#endif

/* Exports t (any dtype, any device tendo has, any strides, 0-d and empty
 * included) as a new DLManagedTensorVersioned of version 1.x with flags 0
 * (writable, not a copy).  It holds its own reference to t's elements, so t
 * may be freed first; the caller (the consumer) calls its deleter exactly
 * once, which frees it and that reference.  It owns its shape and strides
 * arrays; strides are always filled in, in elements; data is the address
 * of element 0 with byte_offset 0 (as PyTorch does), or NULL for an empty
 * tensor.  bf16 is kDLBfloat with 16 bits.  A CUDA tensor is exported
 * once the work queued on its device is done (tendo_sync), so a consumer on
 * any stream reads its values; the consumer must finish its own work on the
 * memory before calling the deleter, after which tendo may reuse it.  NULL
 * on failure: TENDO_ERR_INVALID_ARG (t is NULL), TENDO_ERR_CUDA, TENDO_ERR_OOM. */
TENDO_API DLManagedTensorVersioned *tendo_to_dlpack_versioned(const tendo_tensor *t);
/* The same as the legacy DLManagedTensor, for consumers older than
 * DLPack 1.0 (the "dltensor" capsule of Python's __dlpack__). */
TENDO_API DLManagedTensor *tendo_to_dlpack(const tendo_tensor *t);

/* Imports m as a new tendo_tensor viewing m's elements (no copy); the
 * caller frees it with tendo_tensor_free.  On success tendo takes m over:
 * m's deleter (when not NULL) is called exactly once, when the last tendo
 * view of those elements is freed (for a tensor tendo exported, at once:
 * the result then shares the original's storage).  NULL strides mean
 * row-major.  Flags: DLPACK_FLAG_BITMASK_IS_COPIED is accepted; a
 * read-only tensor (DLPACK_FLAG_BITMASK_READ_ONLY) is refused, because
 * nothing stops a write to a tendo tensor, and so is any flag bit this
 * header does not define.  On failure NULL, and m is untouched and still
 * the caller's: its deleter has not been called, and calling it is the
 * caller's job (as DLPack asks of a consumer that gives up):
 *   TENDO_ERR_INVALID_ARG  m is NULL, ndim is out of 0..TENDO_MAX_DIMS, shape
 *                          is NULL, data is NULL for a non-empty tensor, or
 *                          the strides reach outside the address space;
 *   TENDO_ERR_SHAPE        a negative size, or more than 2^63-1 elements;
 *   TENDO_ERR_UNSUPPORTED  a major version other than 1, a dtype this build
 *                          lacks (named: "float64", "int32", "bfloat16" in a
 *                          build without bf16...), vector lanes, an element
 *                          address not aligned to the element size, the
 *                          read-only flag or an unknown flag;
 *   TENDO_ERR_DEVICE       a device tendo cannot make tensors on (CUDA in a
 *                          build without it, ROCm, ...);
 *   TENDO_ERR_OOM.
 * kDLCUDAHost and kDLROCMHost (pinned host memory) import as CPU tensors,
 * kDLCUDAManaged as CUDA tensors of device_id.  A CUDA producer's writes
 * must be complete (or ordered before tendo's per-thread stream) when m is
 * handed over: DLPack leaves that to the exchange, e.g. Python's
 * __dlpack__(stream=...).  An import is a view and reads no element: a
 * kDLBool producer's bytes must be 0 or 1, as a C bool's are. */
TENDO_API tendo_tensor *tendo_from_dlpack_versioned(DLManagedTensorVersioned *m);
/* The same for the legacy DLManagedTensor (no version, no flags). */
TENDO_API tendo_tensor *tendo_from_dlpack(DLManagedTensor *m);

#ifdef __cplusplus
}
#endif

#endif /* TENDO_DLPACK_H */
