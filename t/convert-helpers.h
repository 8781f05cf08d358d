/* t/convert-helpers.h - per dtype: an element as a double, and a double
 * rounded once to the dtype. Included by t/each-dtype.h. */
static double DTFN(values_elem)(E x) { return E_TO_DOUBLE(x); }
static E DTFN(round)(double v) { return E_FROM_DOUBLE(v); }
