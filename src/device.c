/* src/device.c - device handles and what this build can run on. */
#include <stdio.h>

#include "internal.h"

tendo_device tendo_cpu(void) { return (tendo_device){TENDO_CPU, 0}; }

tendo_device tendo_cuda(int index) { return (tendo_device){TENDO_CUDA, index}; }

bool tendo_device_equal(tendo_device a, tendo_device b)
{
    return a.type == b.type && a.index == b.index;
}

/* The CUDA backend is not part of this build yet: no device is usable. */
bool tendo_cuda_available(void) { return false; }

int tendo_cuda_device_count(void) { return 0; }

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
    if (d.type == TENDO_CUDA)
        tendo__fail(TENDO_ERR_DEVICE, op, "device %s is not available (tendo was built without CUDA)",
                    tendo_device_str(d));
    else
        tendo__fail(TENDO_ERR_DEVICE, op, "no such device %s", tendo_device_str(d));
    return false;
}
