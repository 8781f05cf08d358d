/* t/fuzz/fuzz-safetensors.c - tendo_safetensors_load on arbitrary bytes.
 *
 * The input is the file, loaded on the CPU.  A load either fails with one
 * of the statuses io.h promises (TENDO_ERR_FORMAT and
 * TENDO_ERR_UNSUPPORTED naming the file) or gives a collection whose
 * names are unique and not empty, whose metadata can be read, and whose
 * every tensor's every element can be read (the views of the mapping
 * included) and converted to f32, but for the tensors of a dtype this build
 * lacks, which tendo_collection_at and _get refuse naming them.
 */
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file("in.safetensors", data, size);
    tendo_collection *c = tendo_safetensors_load(path, tendo_cpu());
    int64_t n, nmeta;
    uint64_t bytes = 0;

    if (!c) {
        fuzz_check_refusal(path);
        return 0;
    }
    n = tendo_collection_count(c);
    nmeta = tendo_collection_metadata_count(c);
    fuzz_check(n >= 0 && nmeta >= 0, "counts %lld, %lld", (long long)n, (long long)nmeta);
    for (int64_t i = 0; i < nmeta; i++) {
        const char *k = tendo_collection_metadata_key(c, i);

        fuzz_check(k && *k, "metadata key %lld is empty", (long long)i);
        fuzz_check(tendo_collection_metadata(c, k) != NULL, "metadata '%s' has no value", k);
    }
    for (int64_t i = 0; i < n; i++) {
        const char *name = tendo_collection_name(c, i);
        tendo_tensor *t = tendo_collection_at(c, i), *f;

        fuzz_check(name && *name, "tensor %lld has no name", (long long)i);
        if (!t) { /* a dtype this build lacks: refused by name, at and get alike */
            fuzz_check(tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED &&
                           strstr(tendo_error_message(tendo_last_error()), name),
                       "tensor %lld ('%s') is absent without TENDO_ERR_UNSUPPORTED naming it: %s", (long long)i, name,
                       tendo_error_message(tendo_last_error()));
            fuzz_check(tendo_collection_get(c, name) == NULL &&
                           tendo_error_status(tendo_last_error()) == TENDO_ERR_UNSUPPORTED,
                       "'%s' is absent by index but not by name", name);
            continue;
        }
        fuzz_check(tendo_collection_get(c, name) == t, "'%s' is not found by its name", name);
        bytes += (uint64_t)tendo_tensor_numel(t) * tendo_dtype_size(tendo_tensor_dtype(t));
        fuzz_check(bytes <= size, "the tensors hold more bytes than the %zu-byte file", size);
        (void)fuzz_touch(t);
        f = tendo_tensor_to_dtype(t, TENDO_F32);
        fuzz_check(f != NULL, "to f32: %s", tendo_error_message(tendo_last_error()));
        (void)fuzz_touch(f);
        tendo_tensor_free(f);
    }
    tendo_collection_free(c);
    return 0;
}
