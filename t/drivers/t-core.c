/* t/drivers/t-core.c - devices, errors and the layout arithmetic under every view. */
#include <string.h>

#include "core/internal.h"
#include "tap.h"

static void test_devices(void)
{
    is_string("cpu", tendo_device_str(tendo_cpu()), "cpu prints as cpu");
    is_string("cuda:0", tendo_device_str(tendo_cuda(0)), "cuda(0) prints as cuda:0");
    is_string("cuda:12", tendo_device_str(tendo_cuda(12)), "cuda(12) prints as cuda:12");
    ok(tendo_device_equal(tendo_cuda(1), tendo_cuda(1)) && !tendo_device_equal(tendo_cpu(), tendo_cuda(0)),
       "device_equal compares type and index");
    int n = tendo_cuda_device_count();
    char want[64];

    tendo_clear_error();
    ok(tendo_cuda_available() == (n > 0) && tendo_error_status(tendo_last_error()) == TENDO_OK,
       "CUDA available exactly when there are devices (%d), and asking is no error", n);
    ok(tendo__check_device("zeros", tendo_cpu()), "the CPU is usable");
    ok(!tendo__check_device("zeros", tendo_cuda(n)), "cuda:%d (past the count) is refused", n);
    is_int(TENDO_ERR_DEVICE, tendo_error_status(tendo_last_error()), "  with TENDO_ERR_DEVICE");
    snprintf(want, sizeof want, "zeros: device cuda:%d", n);
    ok(strstr(tendo_error_message(tendo_last_error()), want) != NULL,
       "  naming the op and the device: %s", tendo_error_message(tendo_last_error()));
    {
        char name[64] = "untouched";
        size_t total = 7, avail = 7;

        ok(tendo_cuda_device_info(n, name, sizeof name, &total, &avail) == TENDO_ERR_DEVICE &&
               !strcmp(name, "untouched") && total == 7 && avail == 7,
           "cuda_device_info of cuda:%d (past the count) is TENDO_ERR_DEVICE, outputs untouched", n);
        for (int i = 0; i < n; i++)
            ok(tendo_cuda_device_info(i, name, sizeof name, &total, &avail) == TENDO_OK && name[0] && total > 0 &&
                   avail <= total,
               "cuda:%d is %s with %zu bytes, %zu free", i, name, total, avail);
    }
    is_int(TENDO_OK, tendo_sync(tendo_cpu()), "sync on the CPU is a no-op");
    tendo_set_allow_tf32(true);
    ok(tendo_get_allow_tf32(), "allow_tf32 can be set");
    tendo_set_allow_tf32(false);
    ok(!tendo_get_allow_tf32(), "  and reset (the default)");
}

static void test_errors(void)
{
    is_int(TENDO_OK, tendo_error_status(NULL), "NULL error reads as TENDO_OK");
    is_int(TENDO_ERR_SHAPE, tendo__fail(TENDO_ERR_SHAPE, "add", "shapes %s and %s cannot broadcast",
                                        tendo__shape_str(2, (int64_t[]){3, 4}).s,
                                        tendo__shape_str(2, (int64_t[]){2, 4}).s),
           "tendo__fail returns its status");
    is_string("add: shapes [3,4] and [2,4] cannot broadcast", tendo_error_message(tendo_last_error()),
              "message is 'op: text'");
    is_string("add", tendo_error_op(tendo_last_error()), "op is recorded");
    tendo_clear_error();
    is_int(TENDO_OK, tendo_error_status(tendo_last_error()), "clear_error resets the status");
    is_string("no error", tendo_error_message(tendo_last_error()), "  and the message");
    is_string("shape error", tendo_status_str(TENDO_ERR_SHAPE), "status_str names a status");
    is_string("[]", tendo__shape_str(0, NULL).s, "0-d shape prints as []");
    is_string("[9223372036854775807,-1]", tendo__shape_str(2, (int64_t[]){INT64_MAX, -1}).s,
              "extreme sizes print in full");
}

static void test_check_shape(void)
{
    int64_t n = -7;

    ok(tendo__check_shape("t", 3, (int64_t[]){2, 3, 4}, &n) && n == 24, "[2,3,4] has 24 elements");
    ok(tendo__check_shape("t", 0, NULL, &n) && n == 1, "0-d has one element");
    ok(tendo__check_shape("t", 2, (int64_t[]){5, 0}, &n) && n == 0, "[5,0] has none");
    ok(!tendo__check_shape("t", -1, NULL, &n) &&
           tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG, "ndim -1 refused");
    ok(!tendo__check_shape("t", 9, (int64_t[9]){1}, &n), "ndim 9 refused");
    ok(!tendo__check_shape("t", 2, NULL, &n), "NULL shape refused");
    ok(!tendo__check_shape("t", 2, (int64_t[]){3, -2}, &n) &&
           tendo_error_status(tendo_last_error()) == TENDO_ERR_SHAPE, "negative size refused");
    ok(!tendo__check_shape("t", 2, (int64_t[]){1LL << 32, 1LL << 31}, &n), "2^63 elements refused");
    ok(!tendo__check_shape("t", 3, (int64_t[]){0, 1LL << 62, 4}, &n),
       "an empty shape whose strides would overflow is refused");
}

static void test_strides(void)
{
    int64_t s[4];

    tendo__contiguous_strides(4, (int64_t[]){2, 3, 0, 5}, s);
    ok(s[0] == 15 && s[1] == 5 && s[2] == 5 && s[3] == 1, "contiguous strides treat 0 as 1");
    ok(tendo__strides_contiguous(3, (int64_t[]){2, 1, 3}, (int64_t[]){3, 99, 1}),
       "size-1 dims do not break contiguity");
    ok(!tendo__strides_contiguous(2, (int64_t[]){2, 3}, (int64_t[]){1, 2}), "transposed is not contiguous");
    ok(tendo__strides_contiguous(2, (int64_t[]){0, 3}, (int64_t[]){7, 7}), "empty is contiguous");
    is_int(1, tendo__wrap_dim("t", -2, 3, (int64_t[]){1, 2, 3}), "dim -2 of 3 is 1");
    is_int(-1, tendo__wrap_dim("sum", 3, 3, (int64_t[]){1, 2, 3}), "dim 3 of 3 is out of range");
    is_string("sum: dim 3 is out of range for shape [1,2,3] (expected -3..2)",
              tendo_error_message(tendo_last_error()), "  and says so");
}

static void test_broadcast(void)
{
    int64_t out[8];
    int n;

    ok(tendo__broadcast_shapes("t", 2, (int64_t[]){3, 4}, 1, (int64_t[]){4}, &n, out) && n == 2 &&
           out[0] == 3 && out[1] == 4, "[3,4] and [4] -> [3,4]");
    ok(tendo__broadcast_shapes("t", 3, (int64_t[]){2, 1, 3}, 2, (int64_t[]){4, 1}, &n, out) && n == 3 &&
           out[0] == 2 && out[1] == 4 && out[2] == 3, "[2,1,3] and [4,1] -> [2,4,3]");
    ok(tendo__broadcast_shapes("t", 1, (int64_t[]){0}, 1, (int64_t[]){1}, &n, out) && out[0] == 0,
       "[0] and [1] -> [0]");
    ok(tendo__broadcast_shapes("t", 0, NULL, 2, (int64_t[]){2, 2}, &n, out) && n == 2,
       "a scalar broadcasts to anything");
    ok(!tendo__broadcast_shapes("add", 2, (int64_t[]){3, 4}, 2, (int64_t[]){2, 4}, &n, out),
       "[3,4] and [2,4] do not broadcast");
    is_string("add: shapes [3,4] and [2,4] cannot broadcast", tendo_error_message(tendo_last_error()),
              "  and the message names both shapes");
    ok(!tendo__broadcast_shapes("t", 1, (int64_t[]){0}, 1, (int64_t[]){2}, &n, out), "[0] and [2] do not");
}

/* Every element of (old shape/stride) must sit where the new strides say. */
static bool same_offsets(int on, const int64_t *os, const int64_t *ost, int nn, const int64_t *ns,
                         const int64_t *nst, int64_t numel)
{
    for (int64_t k = 0; k < numel; k++) {
        int64_t a = 0, b = 0, f = k;
        for (int d = on - 1; d >= 0; d--)
            a += f % os[d] * ost[d], f /= os[d];
        f = k;
        for (int d = nn - 1; d >= 0; d--)
            b += f % ns[d] * nst[d], f /= ns[d];
        if (a != b)
            return false;
    }
    return true;
}

static void test_view_strides(void)
{
    int64_t st[8];
    uint64_t seed = 12345;
    int checked = 0, wrong = 0;

    ok(tendo__view_strides(3, (int64_t[]){2, 3, 4}, (int64_t[]){12, 4, 1}, 2, (int64_t[]){6, 4}, st) &&
           st[0] == 4 && st[1] == 1, "[2,3,4] views as [6,4]");
    ok(!tendo__view_strides(2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 1, (int64_t[]){6}, st),
       "a transposed [3,2] cannot be flattened");
    ok(tendo__view_strides(2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 3, (int64_t[]){3, 1, 2}, st) &&
           st[0] == 1 && st[2] == 3, "but it can gain a size-1 dim");
    ok(tendo__view_strides(2, (int64_t[]){4, 3}, (int64_t[]){8, 2}, 3, (int64_t[]){2, 2, 3}, st) &&
           st[0] == 16 && st[1] == 8 && st[2] == 2, "a strided slice splits its outer dim");
    ok(tendo__view_strides(0, NULL, NULL, 2, (int64_t[]){1, 1}, st), "a scalar views as [1,1]");

    /* random geometries: whenever a view is claimed, every offset agrees */
    for (int iter = 0; iter < 2000; iter++) {
        int64_t shape[4], stride[4], ns[4];
        int nd = 1 + (int)(seed % 4), nn;
        int64_t numel = 1;

        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        for (int d = 0; d < nd; d++) {
            shape[d] = 1 + (int64_t)((seed >> (8 * d + 16)) % 4);
            numel *= shape[d];
        }
        tendo__contiguous_strides(nd, shape, stride);
        if (seed & 1) { /* swap two dims */
            int a = (int)((seed >> 40) % nd), b = (int)((seed >> 44) % nd);
            int64_t t = shape[a]; shape[a] = shape[b]; shape[b] = t;
            t = stride[a]; stride[a] = stride[b]; stride[b] = t;
        }
        /* new shape: factor numel into up to 3 dims */
        nn = 0;
        {
            int64_t rest = numel;
            for (int64_t f = 2; f <= rest && nn < 3; f++)
                while (rest % f == 0 && nn < 3 && ((seed >> (nn + 50)) & 1)) {
                    ns[nn++] = f;
                    rest /= f;
                }
            ns[nn++] = rest;
        }
        if (tendo__view_strides(nd, shape, stride, nn, ns, st)) {
            checked++;
            if (!same_offsets(nd, shape, stride, nn, ns, st, numel))
                wrong++;
        }
    }
    ok(checked > 500 && wrong == 0, "2000 random reshapes: %d views, %d with a wrong offset", checked, wrong);
}

int main(void)
{
    test_errors();
    test_devices();
    test_check_shape();
    test_strides();
    test_broadcast();
    test_view_strides();
    return done_testing();
}
