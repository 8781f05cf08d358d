/* t/lib/matmul-ref.h - numpy.matmul in long double, the reference of the
 * matmul tests (t/bodies/nn-body.h, t/bodies/matmul-body.h); their
 * tolerances come from compare-body.h's matmul_bounds. */
#ifndef TENDO_T_MATMUL_REF_H
#define TENDO_T_MATMUL_REF_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"

/* numpy.matmul in double: out (shape *no/so) and sum |a||b| per element
 * (the caller frees both); false when the shapes do not match. */
static bool t_matmul_ref(int na, const int64_t *sa, const double *av, int nb, const int64_t *sb, const double *bv,
                         int *no, int64_t *so, double **out, double **mag, int64_t *kk)
{
    int abn = na > 2 ? na - 2 : 0, bbn = nb > 2 ? nb - 2 : 0, nbatch;
    int64_t m = na == 1 ? 1 : sa[na - 2], k = sa[na - 1], k2 = nb == 1 ? sb[0] : sb[nb - 2];
    int64_t n = nb == 1 ? 1 : sb[nb - 1], batch[TENDO_MAX_DIMS], nbt, total;

    if (na == 0 || nb == 0 || k != k2 || !t_bshape(abn, sa, bbn, sb, &nbatch, batch))
        return false;
    *no = 0;
    for (int d = 0; d < nbatch; d++)
        so[(*no)++] = batch[d];
    if (na > 1)
        so[(*no)++] = m;
    if (nb > 1)
        so[(*no)++] = n;
    nbt = t_numel(nbatch, batch);
    total = nbt * m * n;
    *out = malloc((size_t)(total ? total : 1) * sizeof **out);
    *mag = malloc((size_t)(total ? total : 1) * sizeof **mag);
    *kk = k;
    for (int64_t bi = 0; bi < nbt; bi++) {
        int64_t ia = t_bcast(nbatch, batch, abn, sa, bi), ib = t_bcast(nbatch, batch, bbn, sb, bi);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                /* in long double: a reference for f64 results too */
                long double s = 0, g = 0;
                for (int64_t p = 0; p < k; p++) {
                    long double x = av[(ia * m + i) * k + p], y = bv[(ib * k + p) * n + j];
                    s += x * y;
                    g += fabsl(x * y);
                }
                (*out)[(bi * m + i) * n + j] = (double)s;
                (*mag)[(bi * m + i) * n + j] = (double)g;
            }
    }
    return true;
}

#endif
