/* kernels/sim/runtime.c - the CUDA runtime calls of tendo on the simulated
 * devices: devices and their properties, the current device, errors
 * (each thread's last error; a sticky error breaks its device for good,
 * as a GPU fault breaks a context), streams, events and peer access.
 * When work runs is queue.c's business: the syncs here ask it to run
 * what they wait for.  Defined against CUDA's own header, so the
 * signatures are the real ones. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

/* ---- devices -------------------------------------------------------------- */

static int ndevices;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;
static atomic_int sticky[TENDO__SIM_MAX_DEVICES];
static atomic_uchar peer_on[TENDO__SIM_MAX_DEVICES][TENDO__SIM_MAX_DEVICES];
static __thread int current;
static __thread cudaError_t last_error;

/* Reads TENDO_SIM_DEVICES once. */
static void devices_init(void)
{
    const char *s = getenv("TENDO_SIM_DEVICES");
    long n = s && *s ? strtol(s, NULL, 10) : 2;

    ndevices = n < 0 ? 0 : n > TENDO__SIM_MAX_DEVICES ? TENDO__SIM_MAX_DEVICES : (int)n;
}

int tendo__sim_device_count(void)
{
    pthread_once(&devices_once, devices_init);
    return ndevices;
}

int tendo__sim_current(void) { return current; }

int tendo__sim_swap_current(int dev)
{
    int prev = current;

    current = dev;
    return prev;
}

static bool valid_device(int d) { return d >= 0 && d < tendo__sim_device_count(); }

/* Whether e breaks the context (CUDA's "sticky" errors). */
static bool is_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
        return true;
    default:
        return false;
    }
}

cudaError_t tendo__sim_error(cudaError_t e)
{
    if (e == cudaSuccess)
        return e;
    last_error = e;
    if (is_sticky(e) && valid_device(current)) {
        int none = cudaSuccess;
        (void)atomic_compare_exchange_strong(&sticky[current], &none, (int)e);
    }
    return e;
}

cudaError_t tendo__sim_sticky(void)
{
    return valid_device(current) ? (cudaError_t)atomic_load(&sticky[current]) : cudaSuccess;
}

/* The sticky error (recorded as the last error too), or cudaSuccess. */
static cudaError_t broken(void) { return tendo__sim_error(tendo__sim_sticky()); }

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return tendo__sim_error(cudaErrorInvalidValue);
    *count = tendo__sim_device_count();
    return *count ? cudaSuccess : tendo__sim_error(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    if (!valid_device(device))
        return tendo__sim_error(tendo__sim_device_count() ? cudaErrorInvalidDevice : cudaErrorNoDevice);
    current = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return tendo__sim_error(cudaErrorInvalidValue);
    if (!tendo__sim_device_count())
        return tendo__sim_error(cudaErrorNoDevice);
    *device = current;
    return cudaSuccess;
}

/* What the simulated devices claim to have. */
#define SIM_MEMORY ((size_t)8 << 30)

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return tendo__sim_error(cudaErrorInvalidValue);
    if (!valid_device(device))
        return tendo__sim_error(cudaErrorInvalidDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "tendo simulated device %d", device);
    prop->totalGlobalMem = SIM_MEMORY;
    prop->sharedMemPerBlock = TENDO__SIM_MAX_SHARED;
    prop->sharedMemPerBlockOptin = TENDO__SIM_MAX_SHARED;
    prop->regsPerBlock = 65536;
    prop->warpSize = TENDO__SIM_WARP;
    prop->maxThreadsPerBlock = TENDO__SIM_MAX_THREADS;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = TENDO__SIM_MAX_GRID_YZ;
    prop->maxGridSize[2] = TENDO__SIM_MAX_GRID_YZ;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 1;
    prop->unifiedAddressing = 1;
    prop->pciDeviceID = device;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    size_t used;

    if (broken())
        return tendo__sim_sticky();
    if (!free_bytes || !total)
        return tendo__sim_error(cudaErrorInvalidValue);
    used = tendo__sim_used(current);
    *total = SIM_MEMORY;
    *free_bytes = used < SIM_MEMORY ? SIM_MEMORY - used : 0;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    tendo__sim_flush_device(current);
    return broken();
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    if (!can)
        return tendo__sim_error(cudaErrorInvalidValue);
    if (!valid_device(device) || !valid_device(peer))
        return tendo__sim_error(cudaErrorInvalidDevice);
    *can = device != peer;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    if (broken())
        return tendo__sim_sticky();
    if (flags != 0)
        return tendo__sim_error(cudaErrorInvalidValue);
    if (!valid_device(peer) || peer == current)
        return tendo__sim_error(cudaErrorInvalidDevice);
    if (atomic_exchange(&peer_on[current][peer], 1))
        return tendo__sim_error(cudaErrorPeerAccessAlreadyEnabled);
    return cudaSuccess;
}

/* ---- errors ------------------------------------------------------------------ */

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;

    last_error = cudaSuccess;
    return e != cudaSuccess ? e : tendo__sim_sticky();
}

cudaError_t cudaPeekAtLastError(void) { return last_error != cudaSuccess ? last_error : tendo__sim_sticky(); }

/* Name and text of each error the simulator returns. */
static const struct {
    cudaError_t e;
    const char *name, *text;
} errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled",
     "peer access is already enabled"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
};

const char *cudaGetErrorName(cudaError_t error)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].e == error)
            return errors[i].name;
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].e == error)
            return errors[i].text;
    return "unrecognized error code";
}

/* ---- streams ----------------------------------------------------------------- */

static __thread unsigned long long per_thread_id;
static atomic_ullong next_stream_id = 16;

bool tendo__sim_stream_ok(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    if (!tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    tendo__sim_flush_stream(stream);
    return broken();
}

cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long *id)
{
    if (!id)
        return tendo__sim_error(cudaErrorInvalidValue);
    if (!tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    if (stream != cudaStreamPerThread) {
        *id = 0; /* the legacy stream */
        return cudaSuccess;
    }
    /* one per-thread stream per thread and device */
    if (!per_thread_id)
        per_thread_id = atomic_fetch_add(&next_stream_id, TENDO__SIM_MAX_DEVICES);
    *id = per_thread_id + (unsigned long long)current;
    return cudaSuccess;
}

/* ---- events ------------------------------------------------------------------- */

#define EVENT_MAGIC 0x7e6e7e6eu

struct CUevent_st {
    unsigned magic;
    int device;
    tendo__sim_mark mark; /* where it was last recorded */
};

/* Whether ev is a live event of the current device. */
static bool event_ok(cudaEvent_t ev) { return ev && ev->magic == EVENT_MAGIC && ev->device == current; }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    cudaEvent_t ev;

    if (broken())
        return tendo__sim_sticky();
    if (!event || (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)))
        return tendo__sim_error(cudaErrorInvalidValue);
    ev = malloc(sizeof *ev);
    if (!ev)
        return tendo__sim_error(cudaErrorMemoryAllocation);
    ev->magic = EVENT_MAGIC;
    ev->device = current;
    ev->mark = (tendo__sim_mark){NULL, 0};
    *event = ev;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    if (broken())
        return tendo__sim_sticky();
    if (!event_ok(event) || !tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    event->mark = tendo__sim_mark_now(stream);
    return cudaSuccess;
}

/* A query runs the event's stream up to it (the simulated device is
 * never found busy), so it is as complete as a synchronisation. */
cudaError_t cudaEventQuery(cudaEvent_t event) { return cudaEventSynchronize(event); }

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (!event || event->magic != EVENT_MAGIC)
        return tendo__sim_error(broken() ? tendo__sim_sticky() : cudaErrorInvalidResourceHandle);
    tendo__sim_mark_wait(event->mark);
    return broken();
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    if (broken())
        return tendo__sim_sticky();
    if (!event || event->magic != EVENT_MAGIC || !tendo__sim_stream_ok(stream))
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    if (flags & ~(unsigned)cudaEventWaitExternal)
        return tendo__sim_error(cudaErrorInvalidValue);
    tendo__sim_mark_enqueue_wait(stream, event->mark);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (!event || event->magic != EVENT_MAGIC)
        return tendo__sim_error(cudaErrorInvalidResourceHandle);
    event->magic = 0;
    free(event);
    return cudaSuccess;
}
