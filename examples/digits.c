/* examples/digits.c - tendo-digits: a classifier trained in C.
 *
 * scikit-learn's bundled digits data set (1,797 handwritten digits, 8x8
 * pixels of 0..16, sklearn/datasets/data/digits.csv.gz: 64 pixels and the
 * label per line), split 80/20 by a fixed shuffle; a multilayer perceptron
 * 64 -> 128 -> 10 with ReLU, the mean cross-entropy, AdamW on minibatches
 * of 64 with the learning rate decaying on a cosine; each epoch prints the
 * training loss and the test accuracy.
 *
 *   tendo-digits [--epochs N] DIGITS.csv      (zcat digits.csv.gz > DIGITS.csv; - reads standard input)
 */
#define PROGRAM "tendo-digits"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

enum { PIXELS = 64, CLASSES = 10, HIDDEN = 128, BATCH = 64, MAX_SAMPLES = 4096 };

static float images[MAX_SAMPLES][PIXELS];
static int64_t labels[MAX_SAMPLES];

/* Reads lines of 64 pixels and a label; returns their count. */
static int read_digits(const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    int n = 0;

    if (!f) {
        perror(path);
        exit(1);
    }
    for (;;) {
        double v;
        int k;
        for (k = 0; k <= PIXELS && fscanf(f, " %lf ,", &v) == 1; k++)
            if (k < PIXELS)
                images[n][k] = (float)(v / 16.0);
            else
                labels[n] = (int64_t)v;
        if (k == 0 && feof(f))
            break;
        if (k != PIXELS + 1 || labels[n] < 0 || labels[n] >= CLASSES || ++n == MAX_SAMPLES) {
            fprintf(stderr, "%s: %s: line %d is not 64 pixels and a label 0..9\n", PROGRAM, path, n + 1);
            exit(1);
        }
    }
    if (f != stdin)
        fclose(f);
    return n;
}

/* A fixed shuffle (a 64-bit LCG) of order[0..n). */
static void shuffle(int *order, int n)
{
    uint64_t s = 20261127;

    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((s >> 33) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* The samples order[from..from+n) as tensors: x [n, 64] and y [n]. */
static void batch(const int *order, int from, int n, tensor_f32 **x, tensor_i64 **y)
{
    static float xs[MAX_SAMPLES * PIXELS];
    static int64_t ys[MAX_SAMPLES];

    for (int i = 0; i < n; i++) {
        memcpy(&xs[i * PIXELS], images[order[from + i]], sizeof images[0]);
        ys[i] = labels[order[from + i]];
    }
    *x = CHECK(tensor_f32_from_data(xs, TENDO_SHAPE(n, PIXELS), tendo_cpu()));
    *y = CHECK(tensor_i64_from_data(ys, TENDO_SHAPE(n), tendo_cpu()));
}

typedef struct {
    tensor_f32 *w1, *b1, *w2, *b2;
} mlp;

/* A leaf of shape [r, c] (c 0: [r]) drawn uniform in +-1/sqrt(fan_in), as torch.nn.Linear. */
static tensor_f32 *param(int64_t r, int64_t c, int64_t fan_in, uint64_t seed, tendo_optimizer *opt)
{
    tensor_f32 *u = c ? CHECK(tensor_f32_rand(TENDO_SHAPE(r, c), seed, tendo_cpu()))
                      : CHECK(tensor_f32_rand(TENDO_SHAPE(r), seed, tendo_cpu()));
    tensor_f32 *s = CHECK(tensor_mul_scalar(u, 2.0 / sqrt((double)fan_in)));
    tensor_f32 *p = CHECK(tensor_add_scalar(s, -1.0 / sqrt((double)fan_in)));

    tensor_free(u);
    tensor_free(s);
    if (tensor_set_requires_grad(p, true) != TENDO_OK || tendo_optimizer_add(opt, tensor_erase(p)) != TENDO_OK)
        die("a parameter");
    return p;
}

/* The logits [n, 10] of x [n, 64]: relu(x W1 + b1) W2 + b2. */
static tensor_f32 *logits(const mlp *m, const tensor_f32 *x)
{
    tensor_f32 *h = CHECK(tensor_matmul(x, m->w1)), *hb = CHECK(tensor_add(h, m->b1)), *a = CHECK(tensor_relu(hb));
    tensor_f32 *o = CHECK(tensor_matmul(a, m->w2)), *ob = CHECK(tensor_add(o, m->b2));

    tensor_free(h), tensor_free(hb), tensor_free(a), tensor_free(o);
    return ob;
}

/* How many of the n samples order[from..) the model classifies right. */
static int64_t correct(const mlp *m, const int *order, int from, int n)
{
    bool was = tendo_set_grad_enabled(false);
    tensor_f32 *x, *lg;
    tensor_i64 *y, *pred, *right;
    tensor_bool *hit;
    int64_t count;

    batch(order, from, n, &x, &y);
    lg = logits(m, x);
    pred = CHECK(tensor_argmax(lg, 1, false));
    hit = CHECK(tensor_eq(pred, y));
    right = CHECK(tensor_sum_all(hit)); /* bool sums in i64 */
    if (tensor_copy_to(right, &count, 1) != TENDO_OK)
        die("copy_to");
    tensor_free(x), tensor_free(y), tensor_free(lg), tensor_free(pred), tensor_free(hit), tensor_free(right);
    tendo_set_grad_enabled(was);
    return count;
}

int main(int argc, char **argv)
{
    static int order[MAX_SAMPLES];
    const char *path = NULL;
    int epochs = 30, n, ntest, ntrain;
    tendo_optimizer *opt;
    mlp m;

    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--epochs") && i + 1 < argc)
            epochs = atoi(argv[++i]);
        else if (!path && (argv[i][0] != '-' || !argv[i][1]))
            path = argv[i];
        else
            path = NULL, i = argc;
    if (!path || epochs < 1) {
        fprintf(stderr, "usage: %s [--epochs N] DIGITS.csv   (zcat sklearn/datasets/data/digits.csv.gz > DIGITS.csv)\n",
                PROGRAM);
        return 2;
    }
    n = read_digits(path);
    ntest = n / 5, ntrain = n - ntest;
    if (ntrain < BATCH) {
        fprintf(stderr, "%s: %s: %d samples are too few\n", PROGRAM, path, n);
        return 1;
    }
    shuffle(order, n); /* the test set is the last fifth */
    opt = CHECK(tendo_adamw_new(1e-2, 0.9, 0.999, 1e-8, 1e-4));
    m.w1 = param(PIXELS, HIDDEN, PIXELS, 1, opt);
    m.b1 = param(HIDDEN, 0, PIXELS, 2, opt);
    m.w2 = param(HIDDEN, CLASSES, HIDDEN, 3, opt);
    m.b2 = param(CLASSES, 0, HIDDEN, 4, opt);
    printf("%s: %d digits: %d to train on, %d to test; MLP 64-128-10, AdamW\n", PROGRAM, n, ntrain, ntest);
    for (int e = 1, step = 0, steps = epochs * (ntrain / BATCH); e <= epochs; e++) {
        double total = 0;
        for (int b = 0; b + BATCH <= ntrain; b += BATCH, step++) {
            tensor_f32 *x, *lg, *loss;
            tensor_i64 *y;
            float l = 0;

            batch(order, b, BATCH, &x, &y);
            lg = logits(&m, x);
            loss = CHECK(tensor_cross_entropy(lg, y, -100, 0.0));
            if (tensor_backward(loss, NULL) != TENDO_OK || tensor_copy_to(loss, &l, 1) != TENDO_OK)
                die("backward");
            tendo_optimizer_set_lr(opt, tendo_lr_cosine(step, 0, steps, 1e-2, 1e-4));
            if (tendo_optimizer_step(opt) != TENDO_OK)
                die("optimizer_step");
            tendo_optimizer_zero_grad(opt);
            total += l;
            tensor_free(x), tensor_free(y), tensor_free(lg), tensor_free(loss);
        }
        if (e % 5 == 0 || e == 1 || e == epochs)
            printf("epoch %2d  loss %.4f  test accuracy %.1f %%\n", e, total / (ntrain / BATCH),
                   100.0 * (double)correct(&m, order, ntrain, ntest) / ntest);
    }
    {
        int64_t right = correct(&m, order, ntrain, ntest);
        printf("%s: test accuracy %.1f %% (%lld of %d)\n", PROGRAM, 100.0 * (double)right / ntest, (long long)right,
               ntest);
    }
    tendo_optimizer_free(opt);
    tensor_free(m.w1), tensor_free(m.b1), tensor_free(m.w2), tensor_free(m.b2);
    return 0;
}
