/* t/drivers/t-nn.c - matmul, softmax, log_softmax, layer_norm and rms_norm for
 * every dtype and layout, against double references (the body is
 * t/bodies/nn-body.h). */
#include <string.h>

#include "check.h"
#include "dt.h"

#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "layouts-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "nn-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_nn);
    return done_testing();
}
