/* t/drivers/t-tensor.c - creation, properties, copies, random and printing for
 * every dtype (the body is t/bodies/tensor-body.h). */
#include <stdio.h>
#include <string.h>

#include "dt.h"

#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "tensor-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_tensor);
    return done_testing();
}
