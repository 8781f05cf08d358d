/* src/cuda/none.c - the CUDA glue of a build without CUDA.
 *
 * Such a build never makes a CUDA tensor (tendo__check_device refuses CUDA
 * devices), so none of these is reached from a public function; they exist
 * so that the C core calls the glue without #ifdefs, and fail cleanly if
 * they ever are reached. */
#include "cuda/glue.h"

static bool none(const char *op)
{
    tendo__fail(TENDO_ERR_DEVICE, op, "tendo was built without CUDA");
    return false;
}

int tendo__cuda_count(void) { return 0; }

struct tendo__pool *tendo__cuda_pool(int index)
{
    (void)index;
    return NULL;
}

uintptr_t tendo__cuda_stream_key(int index)
{
    (void)index;
    return 0;
}

bool tendo__cuda_use(const char *op, tendo_device d)
{
    (void)d;
    return none(op);
}

bool tendo__cuda_ok(const char *op, int err) { return err == 0 || none(op); }

bool tendo__cuda_blas_ok(const char *op, int status) { return status == 0 || none(op); }

bool tendo__cuda_begin(const char *op, const tendo__tensor *const *ts, int n)
{
    (void)ts, (void)n;
    return none(op);
}

bool tendo__cuda_end(const tendo__tensor *const *ts, int n, bool ok)
{
    (void)ts, (void)n;
    return ok;
}

bool tendo__cuda_loop(const char *op, const tendo__iter *it, const tendo__tensor *const *ts,
                      tendo__cu_loop_fn fn, const void *ctx)
{
    (void)it, (void)ts, (void)fn, (void)ctx;
    return none(op);
}

bool tendo__cuda_rows(const char *op, const tendo__iter *starts, int64_t len, int64_t in_step,
                      int64_t out_step, const tendo__tensor *const *ts, int nts, tendo__cu_rows_fn fn,
                      const void *ctx)
{
    (void)starts, (void)len, (void)in_step, (void)out_step, (void)ts, (void)nts, (void)fn, (void)ctx;
    return none(op);
}

bool tendo__cuda_copy(const char *op, tendo__tensor *out, const tendo__tensor *in)
{
    (void)out, (void)in;
    return none(op);
}

bool tendo__cuda_fill(const char *op, tendo__tensor *t, const void *value)
{
    (void)t, (void)value;
    return none(op);
}

bool tendo__cuda_upload(const char *op, tendo_device d, void *dst, const void *src, size_t n)
{
    (void)d, (void)dst, (void)src, (void)n;
    return none(op);
}

bool tendo__cuda_download(const char *op, tendo_device d, void *dst, const void *src, size_t n)
{
    (void)d, (void)dst, (void)src, (void)n;
    return none(op);
}

bool tendo__cuda_peer(const char *op, tendo_device dd, void *dst, tendo_device sd, const void *src, size_t n)
{
    (void)dd, (void)dst, (void)sd, (void)src, (void)n;
    return none(op);
}

void *tendo__cuda_cublas(const char *op, int index)
{
    (void)index;
    none(op);
    return NULL;
}

bool tendo__cuda_sync(const char *op, tendo_device d)
{
    (void)d;
    return none(op);
}
