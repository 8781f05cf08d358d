/* t/drivers/t-matmul.c - the products of a few rows (src/cpu/skinny.c: every
 * weight layout, tails, batches, thread counts) and matmul_out, for every
 * float dtype, against double references (the body is
 * t/bodies/matmul-body.h).  The CPU path is whatever TENDO_CPU allows (CI
 * runs this at every level); matmul_out also on cuda:0 where there is one
 * (the simulated device in CI). */
#include <string.h>

#include "check.h"
#include "dt.h"

#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "layouts-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "compare-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "matmul-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_matmul);
    return done_testing();
}
