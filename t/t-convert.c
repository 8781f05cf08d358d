/* t/t-convert.c - dtype conversion between every ordered pair of dtypes on
 * contiguous, offset, transposed, strided, flipped and expanded inputs
 * (the body is t/convert-body.h). */
#include <string.h>

#define TEST_KINDS T_ALL
#include "dt.h"
#include "core/internal.h"

/* Per dtype: the raw bits of an element (NaNs collapsed to one pattern,
 * since only NaN-ness is promised across conversions), and the reference:
 * an exact double rounded once to the dtype. */
static uint64_t nan_or(double v, uint64_t bits) { return isnan(v) ? UINT64_MAX : bits; }
#define DEFINE_HELPERS(name, NAME, ct)                                      \
    static uint64_t bits_##name(ct x)                                       \
    {                                                                       \
        uint64_t b = 0;                                                     \
        memcpy(&b, &x, sizeof x);                                           \
        return nan_or(values_elem_##name(x), b);                            \
    }
#define TEST_BODY "convert-helpers.h"
#include "each-dtype.h"
TENDO_FOREACH_DTYPE(DEFINE_HELPERS)
#undef TEST_BODY
#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "convert-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_convert);
    return done_testing();
}
