/* t/drivers/t-loss.c - cross_entropy, cross_entropy_backward and mse_loss
 * for every float dtype, against double references (the body is
 * t/bodies/loss-body.h). */
#include <string.h>

#include "check.h"
#include "dt.h"

#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "layouts-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "loss-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_loss);
    return done_testing();
}
