/* src/core/device.c - device handles and what this build can run on. */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>

#include "core/device.h"
#include "core/internal.h"

tendo_device tendo_cpu(void) { return (tendo_device){TENDO_CPU, 0}; }

tendo_device tendo_cuda(int index) { return (tendo_device){TENDO_CUDA, index}; }

bool tendo_device_equal(tendo_device a, tendo_device b)
{
    return a.type == b.type && a.index == b.index;
}

bool tendo_cuda_available(void) { return tendo__cuda_device.count() > 0; }

int tendo_cuda_device_count(void) { return tendo__cuda_device.count(); }

tendo_status tendo_cuda_device_info(int index, char *name, size_t n, size_t *total_bytes, size_t *free_bytes)
{
    static const char op[] = "cuda_device_info";

    if (!tendo__check_device(op, tendo_cuda(index)))
        return tendo_error_status(tendo_last_error());
    if (!tendo__cuda_device.info(op, index, name, n, total_bytes, free_bytes))
        return tendo_error_status(tendo_last_error());
    return TENDO_OK;
}

tendo_status tendo_sync(tendo_device d)
{
    static const char op[] = "sync";

    if (!tendo__check_device(op, d))
        return tendo_error_status(tendo_last_error());
    if (tendo__device_ops_of(d.type)->sync && !tendo__device_ops_of(d.type)->sync(op, d))
        return tendo_error_status(tendo_last_error());
    return TENDO_OK;
}

static atomic_bool allow_tf32;

void tendo_set_allow_tf32(bool allow) { atomic_store_explicit(&allow_tf32, allow, memory_order_relaxed); }

bool tendo_get_allow_tf32(void) { return atomic_load_explicit(&allow_tf32, memory_order_relaxed); }

const char *tendo_device_str(tendo_device d)
{
    static _Thread_local char ring[8][24];
    static _Thread_local unsigned next;
    char *buf;

    if (d.type == TENDO_CPU && d.index == 0)
        return "cpu";
    buf = ring[next++ % 8];
    if (d.type == TENDO_CPU)
        snprintf(buf, sizeof ring[0], "cpu:%d", d.index);
    else if (d.type == TENDO_CUDA)
        snprintf(buf, sizeof ring[0], "cuda:%d", d.index);
    else
        snprintf(buf, sizeof ring[0], "device?%d", (int)d.type);
    return buf;
}

bool tendo__check_device(const char *op, tendo_device d)
{
    if (d.type == TENDO_CPU && d.index == 0)
        return true;
    if (d.type == TENDO_CUDA && d.index >= 0 && d.index < tendo__cuda_device.count())
        return true;
    if (d.type == TENDO_CUDA && !tendo__cuda_device.built)
        tendo__fail(TENDO_ERR_DEVICE, op, "device %s is not available (tendo was built without CUDA)",
                    tendo_device_str(d));
    else if (d.type == TENDO_CUDA)
        tendo__fail(TENDO_ERR_DEVICE, op, "device %s is not available (%d CUDA devices%s)", tendo_device_str(d),
                    tendo__cuda_device.count(), tendo__cuda_device.count() ? "" : ": no driver or no GPU");
    else
        tendo__fail(TENDO_ERR_DEVICE, op, "no such device %s", tendo_device_str(d));
    return false;
}
