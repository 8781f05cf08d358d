/* t/drivers/t-reduce.c - every reduction of the registry (sum, mean, max, min) and
 * sum_all for every dtype, over every dim of every layout, against double
 * references (the body is t/bodies/reduce-body.h). */
#include <string.h>

#include "check.h"
#include "dt.h"

#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "layouts-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "reduce-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_reductions);
    return done_testing();
}
