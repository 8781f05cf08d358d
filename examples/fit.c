/* examples/fit.c - tendo-fit: training with autograd, in two steps.
 *
 *   1. fits a line y = w x + b to noisy points of y = 3x - 2 (mean squared
 *      error, plain gradient descent);
 *   2. trains a multilayer perceptron, 1 -> 32 -> 32 -> 1 with tanh, to
 *      approximate sin(x) on [-pi, pi] (gradient descent with momentum).
 *
 * Each parameter is a leaf (tensor_set_requires_grad); the forward pass
 * records itself; tensor_backward fills the parameters' gradients; the
 * update runs with grad mode off (torch.no_grad), through the _out forms.
 *
 *   tendo-fit [STEPS]      (default 1500 MLP steps; prints the losses)
 */
#define PROGRAM "tendo-fit"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

static const double PI = 3.14159265358979323846;

static double scalar(const tensor_f32 *t)
{
    float v;

    if (tensor_copy_to(t, &v, 1) != TENDO_OK)
        die("copy_to");
    return v;
}

/* p -= lr * v, v = momentum * v + grad(p); then p's gradient is dropped. */
static void step(tensor_f32 *p, tensor_f32 *v, double lr, double momentum)
{
    bool was = tendo_set_grad_enabled(false);
    tensor_f32 *g = CHECK(tensor_grad(p));
    tensor_f32 *mv = CHECK(tensor_mul_scalar(v, momentum));
    tensor_f32 *lv;

    if (tensor_add_out(v, mv, g) != TENDO_OK)
        die("add_out");
    lv = CHECK(tensor_mul_scalar(v, lr));
    if (tensor_sub_out(p, p, lv) != TENDO_OK)
        die("sub_out");
    tensor_free(lv);
    tensor_free(mv);
    tensor_free(g);
    tensor_zero_grad(p);
    tendo_set_grad_enabled(was);
}

/* ---- 1. a line ------------------------------------------------------------------ */

static void fit_line(void)
{
    enum { N = 64 };
    float xs[N], ys[N];
    tensor_f32 *x, *y, *w, *b, *vw, *vb;

    srand(1);
    for (int i = 0; i < N; i++) {
        xs[i] = -1.0f + 2.0f * (float)i / (N - 1);
        ys[i] = 3.0f * xs[i] - 2.0f + 0.05f * ((float)rand() / RAND_MAX - 0.5f);
    }
    x = CHECK(tensor_f32_from_data(xs, TENDO_SHAPE(N), tendo_cpu()));
    y = CHECK(tensor_f32_from_data(ys, TENDO_SHAPE(N), tendo_cpu()));
    w = CHECK(tensor_f32_zeros(TENDO_SHAPE(1), tendo_cpu()));
    b = CHECK(tensor_f32_zeros(TENDO_SHAPE(1), tendo_cpu()));
    vw = CHECK(tensor_f32_zeros(TENDO_SHAPE(1), tendo_cpu()));
    vb = CHECK(tensor_f32_zeros(TENDO_SHAPE(1), tendo_cpu()));
    tensor_set_requires_grad(w, true);
    tensor_set_requires_grad(b, true);
    for (int it = 0; it <= 200; it++) {
        tensor_f32 *wx = CHECK(tensor_mul(x, w)); /* w broadcasts over the points */
        tensor_f32 *pred = CHECK(tensor_add(wx, b));
        tensor_f32 *loss = CHECK(tensor_mse_loss(pred, y));

        if (tensor_backward(loss, NULL) != TENDO_OK)
            die("backward");
        if (it % 50 == 0)
            printf("line  step %3d  loss %.6f  w %.4f  b %.4f\n", it, scalar(loss), scalar(w), scalar(b));
        step(w, vw, 0.1, 0.0);
        step(b, vb, 0.1, 0.0);
        tensor_free(loss);
        tensor_free(pred);
        tensor_free(wx);
    }
    printf("line  fitted y = %.3f x %+.3f (the points follow y = 3 x - 2)\n", scalar(w), scalar(b));
    tensor_free(x), tensor_free(y), tensor_free(w), tensor_free(b), tensor_free(vw), tensor_free(vb);
}

/* ---- 2. a multilayer perceptron ---------------------------------------------------- */

typedef struct {
    tensor_f32 *w, *b, *vw, *vb;
} layer;

static layer layer_new(int64_t in, int64_t out, uint64_t seed)
{
    layer l;
    tensor_f32 *r = CHECK(tensor_f32_randn(TENDO_SHAPE(in, out), seed, tendo_cpu()));

    l.w = CHECK(tensor_mul_scalar(r, 1.0 / sqrt((double)in))); /* LeCun's scale, for tanh */
    l.b = CHECK(tensor_f32_zeros(TENDO_SHAPE(out), tendo_cpu()));
    l.vw = CHECK(tensor_f32_zeros(TENDO_SHAPE(in, out), tendo_cpu()));
    l.vb = CHECK(tensor_f32_zeros(TENDO_SHAPE(out), tendo_cpu()));
    tensor_set_requires_grad(l.w, true);
    tensor_set_requires_grad(l.b, true);
    tensor_free(r);
    return l;
}

/* x W + b, then tanh unless last; a new tensor */
static tensor_f32 *layer_forward(const layer *l, const tensor_f32 *x, bool last)
{
    tensor_f32 *xw = CHECK(tensor_matmul(x, l->w));
    tensor_f32 *h = CHECK(tensor_add(xw, l->b));
    tensor_f32 *a = last ? h : CHECK(tensor_tanh(h));

    tensor_free(xw);
    if (a != h)
        tensor_free(h);
    return a;
}

static void train_mlp(int steps)
{
    enum { N = 256 };
    float xs[N], ys[N];
    layer l[3] = {layer_new(1, 32, 11), layer_new(32, 32, 12), layer_new(32, 1, 13)};
    tensor_f32 *x, *y;
    double first = 0, last = 0;

    for (int i = 0; i < N; i++) {
        xs[i] = (float)(-PI + 2 * PI * i / (N - 1));
        ys[i] = sinf(xs[i]);
    }
    x = CHECK(tensor_f32_from_data(xs, TENDO_SHAPE(N, 1), tendo_cpu()));
    y = CHECK(tensor_f32_from_data(ys, TENDO_SHAPE(N, 1), tendo_cpu()));
    for (int it = 0; it <= steps; it++) {
        tensor_f32 *h1 = layer_forward(&l[0], x, false);
        tensor_f32 *h2 = layer_forward(&l[1], h1, false);
        tensor_f32 *out = layer_forward(&l[2], h2, true);
        tensor_f32 *loss = CHECK(tensor_mse_loss(out, y));

        tensor_free(h1); /* the record keeps what backward needs */
        tensor_free(h2);
        if (tensor_backward(loss, NULL) != TENDO_OK)
            die("backward");
        last = scalar(loss);
        if (it == 0)
            first = last;
        if (it % (steps / 6 > 0 ? steps / 6 : 1) == 0)
            printf("mlp   step %4d  loss %.6f\n", it, last);
        for (int k = 0; k < 3; k++) {
            step(l[k].w, l[k].vw, 0.05, 0.9);
            step(l[k].b, l[k].vb, 0.05, 0.9);
        }
        tensor_free(loss);
        tensor_free(out);
    }
    printf("mlp   sin(x) on [-pi, pi]: mean squared error %.6f after %d steps (%.4f at the start)\n", last, steps,
           first);
    for (int k = 0; k < 3; k++)
        tensor_free(l[k].w), tensor_free(l[k].b), tensor_free(l[k].vw), tensor_free(l[k].vb);
    tensor_free(x);
    tensor_free(y);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 1500;

    if (steps <= 0) {
        fprintf(stderr, "usage: %s [STEPS]\n", PROGRAM);
        return 2;
    }
    fit_line();
    train_mlp(steps);
    return 0;
}
