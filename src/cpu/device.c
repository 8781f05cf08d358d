/* src/cpu/device.c - the CPU's entry in the device table (core/device.h):
 * the CPU kernels that the core reaches.  Host memory, its pool and its
 * copies are the core's own. */
#include "core/device.h"
#include "cpu/cpu.h"

static int one(void) { return 1; }

const tendo__device_ops tendo__cpu_device = {
    .built = true,
    .count = one,
    .transpose = tendo__transpose_copy,
    .matmul = tendo__cpu_matmul,
    .prepack = tendo__cpu_prepack,
#if defined(TENDO_HAVE_I8) && defined(TENDO_HAVE_I32)
    .matmul_i32 = tendo__cpu_matmul_i32,
#endif
    .rope = tendo__cpu_rope,
    .attention = tendo__cpu_attention,
    .attention_backward = tendo__cpu_attention_backward,
};
