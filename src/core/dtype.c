/* src/core/dtype.c - run-time facts about the dtypes this build was made with. */
#include "core/internal.h"

const char *tendo_dtype_name(tendo_dtype dt)
{
    switch (dt) {
#define TENDO__NAME_CASE(name, NAME, ctype) \
    case TENDO_##NAME:                      \
        return #name;
        TENDO_FOREACH_DTYPE(TENDO__NAME_CASE)
#undef TENDO__NAME_CASE
    }
    return "unknown";
}

size_t tendo_dtype_size(tendo_dtype dt)
{
    switch (dt) {
#define TENDO__SIZE_CASE(name, NAME, ctype) \
    case TENDO_##NAME:                      \
        return sizeof(ctype);
        TENDO_FOREACH_DTYPE(TENDO__SIZE_CASE)
#undef TENDO__SIZE_CASE
    }
    return 0;
}
