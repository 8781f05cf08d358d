/* t/drivers/t-ops.c - the elementwise binary and unary ops of the registry and
 * clamp for every dtype, on every layout and broadcast pattern, against
 * double references (the body is t/bodies/ops-body.h). */
#include <string.h>

#include "check.h"
#include "dt.h"

#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "layouts-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "ops-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_ops);
    return done_testing();
}
