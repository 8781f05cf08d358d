/* t/drivers/t-views.c - every view op for every dtype against index arithmetic
 * (the body is t/bodies/views-body.h). */
#include <string.h>

#include "dt.h"

/* shared with tensor-body.h: all of a tensor's values as doubles */
#define TEST_BODY "values-body.h"
#include "each-dtype.h"
#undef TEST_BODY
#define TEST_BODY "views-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_views);
    return done_testing();
}
