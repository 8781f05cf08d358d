/* t/drivers/t-attention.c - rope and attention on every float dtype, against the
 * formulas computed in double: attention as softmax(q k^T * scale + mask) v
 * (grouped-query heads, broadcast and padding masks, bottom-right causal
 * alignment, rows that see no key, no keys at all, query and key blocks
 * with tails, transposed operands, 2-D operands, 1-3 threads bit for bit,
 * argument errors), rope as Hugging Face writes it (rotate_half and
 * interleaved, partial rotation, positions out of order and negative,
 * transposed x, argument errors).  Every case runs on the CPU, then on
 * cuda:0 when there is a GPU (the simulated one in a --enable-cuda-sim
 * build; skipped otherwise).  The body is t/bodies/attention-body.h. */
#include <string.h>

#include "dt.h"

#define TEST_BODY "attention-body.h"
#include "each-dtype.h"

int main(void)
{
    FOR_EACH_DTYPE(test_transformer);
    return done_testing();
}
