/* t/drivers/t-errors.c - bad input of every class, for every dtype (the body is
 * t/bodies/errors-body.h). */
#include <string.h>

#include "dt.h"

#define TEST_BODY "errors-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_errors);
    return done_testing();
}
