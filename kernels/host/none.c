/* kernels/host/none.c - the CUDA entry of the device table (core/device.h) in
 * a build without CUDA: no devices.  tendo__check_device refuses every
 * CUDA device then, so no CUDA tensor exists and no other slot is reached. */
#include "core/device.h"

static int none(void) { return 0; }

const tendo__device_ops tendo__cuda_device = {
    .built = false,
    .count = none,
};
