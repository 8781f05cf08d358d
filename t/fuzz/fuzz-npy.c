/* t/fuzz/fuzz-npy.c - tendo_npy_load on arbitrary bytes.
 *
 * The input is the file.  A load either fails with one of the statuses
 * io.h promises (TENDO_ERR_FORMAT and TENDO_ERR_UNSUPPORTED naming the
 * file) or gives a CPU tensor whose every element can be read, and
 * converted to f32.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file("in.npy", data, size);
    tendo_tensor *t = tendo_npy_load(path);

    if (!t) {
        fuzz_check_refusal(path);
        return 0;
    }
    fuzz_check(tendo_device_equal(tendo_tensor_device(t), tendo_cpu()), "not a CPU tensor");
    fuzz_check((uint64_t)tendo_tensor_numel(t) * tendo_dtype_size(tendo_tensor_dtype(t)) <= size,
               "%lld elements from a %zu-byte file", (long long)tendo_tensor_numel(t), size);
    (void)fuzz_touch(t);
    {
        tendo_tensor *f = tendo_tensor_to_dtype(t, TENDO_F32);

        fuzz_check(f != NULL, "to f32: %s", tendo_error_message(tendo_last_error()));
        fuzz_check(tendo_tensor_numel(f) == tendo_tensor_numel(t), "to f32 changed numel");
        (void)fuzz_touch(f);
        tendo_tensor_free(f);
    }
    tendo_tensor_free(t);
    return 0;
}
