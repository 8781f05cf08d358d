/* examples/embed.c - tendo-embed: sentence embeddings from a BERT-family
 * safetensors checkpoint (e.g. all-MiniLM-L6-v2), every step a tendo op.
 *
 *   tendo-embed [--dtype f32|bf16] [--device cpu|cuda:N] [--repeat N] MODEL.safetensors IDS.npy OUT.npy
 *
 * IDS.npy holds token ids, i64 [batch, len], padded with the pad id (the
 * tokeniser is not tendo's business).  OUT.npy gets the mean-pooled,
 * L2-normalised embeddings, f32 [batch, hidden], as sentence-transformers
 * computes them.  The number of layers comes from the checkpoint's tensor
 * names; the heads, the layer-norm epsilon and the pad id from the
 * config.json beside it (or --heads, --eps, --pad).  --repeat N runs the
 * forward pass N times and prints the best time to stderr (a benchmark). */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tendo.h>

#define PROGRAM "tendo-embed"
#include "common.h"

#define MAX_LAYERS 64


/* Seconds on a monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define T tensor_f32
#define SFX f32
#define AS tendo_as_f32
#define DTYPE TENDO_F32
#define CONVERT_BOOL tensor_bool_to_f32
#define TO_F32 tensor_f32_contiguous
#include "bert-body.h"
#undef T
#undef SFX
#undef AS
#undef DTYPE
#undef CONVERT_BOOL
#undef TO_F32

#ifdef TENDO_HAVE_BF16 /* --dtype bf16, where this build has it */
#define T tensor_bf16
#define SFX bf16
#define AS tendo_as_bf16
#define DTYPE TENDO_BF16
#define CONVERT_BOOL tensor_bool_to_bf16
#define TO_F32 tensor_bf16_to_f32
#include "bert-body.h"
#undef T
#undef SFX
#undef AS
#undef DTYPE
#undef CONVERT_BOOL
#undef TO_F32
#endif

/* The settings config.json (in the model's directory) gives, where the
 * command line did not. */
static void read_config(const char *model, int *heads, double *eps, long *pad)
{
    char path[4096];
    const char *slash = strrchr(model, '/');
    json_t *root, *v;

    snprintf(path, sizeof path, "%.*sconfig.json", slash ? (int)(slash - model + 1) : 0, model);
    if (!(root = json_load_file(path, 0, NULL)))
        return;
    if (*heads <= 0 && json_is_integer(v = json_object_get(root, "num_attention_heads")))
        *heads = (int)json_integer_value(v);
    if (*eps <= 0 && json_is_number(v = json_object_get(root, "layer_norm_eps")))
        *eps = json_number_value(v);
    if (*pad < 0 && json_is_integer(v = json_object_get(root, "pad_token_id")))
        *pad = (long)json_integer_value(v);
    json_decref(root);
}

/* How many encoder.layer.N. prefixes the file has (N = 0, 1, ...). */
static int count_layers(const tendo_collection *c)
{
    int n = 0;

    for (int64_t i = 0; i < tendo_collection_count(c); i++) {
        int k;
        if (sscanf(tendo_collection_name(c, i), "encoder.layer.%d.", &k) == 1 && k + 1 > n)
            n = k + 1;
    }
    return n;
}

static int usage(void)
{
    fprintf(stderr, "usage: tendo-embed [--dtype f32|bf16] [--device cpu|cuda:N] [--repeat N] [--heads N] [--eps E] [--pad ID]\n"
                    "                   MODEL.safetensors IDS.npy OUT.npy\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *dtype = "f32", *device = "cpu", *paths[3];
    int npaths = 0, heads = 0, layers, repeat = 1;
    double best = INFINITY;
    double eps = 0;
    long pad = -1;
    tendo_device dev = tendo_cpu();
    tendo_collection *c;
    tendo_tensor *ids_e, *ids_d;
    tensor_i64 *ids;
    tensor_f32 *out = NULL;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dtype") && i + 1 < argc)
            dtype = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(argv[i], "--heads") && i + 1 < argc)
            heads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--eps") && i + 1 < argc)
            eps = atof(argv[++i]);
        else if (!strcmp(argv[i], "--pad") && i + 1 < argc)
            pad = atol(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (argv[i][0] == '-' || npaths == 3)
            return usage();
        else
            paths[npaths++] = argv[i];
    }
    if (npaths != 3 || repeat < 1 || (strcmp(dtype, "f32") && strcmp(dtype, "bf16")))
        return usage();
    if (strcmp(device, "cpu")) {
        int index = 0;
        if (strncmp(device, "cuda", 4) || (device[4] && sscanf(device + 4, ":%d", &index) != 1))
            return usage();
        dev = tendo_cuda(index);
    }
    read_config(paths[0], &heads, &eps, &pad);
    if (heads <= 0 || eps <= 0 || pad < 0) {
        fprintf(stderr, "tendo-embed: no config.json beside %s: give --heads, --eps and --pad\n", paths[0]);
        return 2;
    }
    c = checked(tendo_safetensors_load(paths[0], dev), paths[0]);
    layers = count_layers(c);
    if (layers < 1 || layers > MAX_LAYERS) {
        fprintf(stderr, "tendo-embed: %s: %d encoder layers (want 1 to %d)\n", paths[0], layers, MAX_LAYERS);
        return 1;
    }
    ids_e = checked(tendo_npy_load(paths[1]), paths[1]);
    ids_d = checked(tendo_tensor_to_device(ids_e, dev), paths[1]);
    ids = checked(tendo_as_i64(ids_d), paths[1]);
    if (tensor_ndim(ids) != 2) {
        fprintf(stderr, "tendo-embed: %s: token ids must be [batch, len]\n", paths[1]);
        return 1;
    }
#ifdef TENDO_HAVE_BF16
    out = !strcmp(dtype, "f32") ? run_f32(c, layers, heads, eps, ids, pad, repeat, &best)
                                : run_bf16(c, layers, heads, eps, ids, pad, repeat, &best);
#else
    if (strcmp(dtype, "f32")) {
        fprintf(stderr, "tendo-embed: this tendo was built without bf16 (--enable-dtypes)\n");
        return 2;
    }
    out = run_f32(c, layers, heads, eps, ids, pad, repeat, &best);
#endif
    if (repeat > 1)
        fprintf(stderr, "tendo-embed: forward pass, best of %d: %.3f ms\n", repeat, best * 1e3);
    if (tendo_npy_save(paths[2], tensor_f32_erase(out)) != TENDO_OK)
        die(paths[2]);
    tensor_free(out);
    tensor_free(ids);
    tendo_tensor_free(ids_e);
    tendo_collection_free(c);
    return 0;
}
