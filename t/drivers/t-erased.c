/* t/drivers/t-erased.c - tendo_tensor: erase, checked down-casts, accessors and
 * freeing through the erased type, for every dtype (the body is
 * t/bodies/erased-body.h); and what TENDO_FOREACH_DTYPE_INFO says of each dtype. */
#include <string.h>

#include "dt.h"

#define TEST_BODY "erased-body.h"
#include "each-dtype.h"

static void test_null(void)
{
    ok(tendo_tensor_ndim(NULL) == -1 && tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG,
       "accessors refuse NULL with TENDO_ERR_INVALID_ARG");
    ok(tendo_tensor_shape(NULL) == NULL && tendo_tensor_numel(NULL) == -1, "  (shape NULL, numel -1)");
    ok(tendo_as_f32(NULL) == NULL && tendo_error_status(tendo_last_error()) == TENDO_ERR_INVALID_ARG,
       "tendo_as_f32(NULL) is NULL with TENDO_ERR_INVALID_ARG");
    tendo_tensor_free(NULL);
    ok(tensor_f32_erase(NULL) == NULL, "erase(NULL) is NULL; tendo_tensor_free(NULL) is a no-op");
}

/* numpy has no bf16 nor fp8. */
static bool no_numpy(const char *name) { return !strcmp(name, "bf16") || !strncmp(name, "f8", 2); }

/* The DLPack code by the dtype's name: kDLBfloat 4, kDLFloat8_e4m3fn 10,
 * kDLFloat8_e5m2 12, kDLBool 6, kDLUInt 1 (u*), kDLInt 0 (i*), kDLFloat 2. */
static bool info_code_ok(const char *name, int code)
{
    int want = !strcmp(name, "bf16") ? 4 : !strcmp(name, "f8e4m3") ? 10 : !strcmp(name, "f8e5m2") ? 12
             : !strcmp(name, "bool") ? 6 : name[0] == 'u' ? 1 : name[0] == 'i' ? 0 : 2;
    return code == want;
}

/* The table's facts about each dtype, as file formats will need them. */
static void test_info(void)
{
    int seen = 0;
#define CHECK_INFO(name, NAME, ct, np, st, code, bits)                                              \
    seen++;                                                                                         \
    ok((size_t)(bits) == 8 * sizeof(ct) && strlen(st) > 0 && info_code_ok(#name, code) &&           \
           (no_numpy(#name) ? np[0] == '\0' : (np[0] == '<' || np[0] == '|')),                        \
       "%s: numpy '%s', safetensors '%s', DLPack code %d, %d bits", #name, np, st, code, bits);
    TENDO_FOREACH_DTYPE_INFO(CHECK_INFO)
#undef CHECK_INFO
    is_int(TENDO_NUM_DTYPES, seen, "TENDO_FOREACH_DTYPE_INFO lists every dtype");
}

int main(void)
{
    FOR_EACH_DTYPE(test_erased);
    test_null();
    test_info();
    return done_testing();
}
