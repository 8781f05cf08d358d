/* examples/fit.c - tendo-fit: training with autograd, in two steps.
 *
 *   1. fits a line y = w x + b to noisy points of y = 3x - 2 (mean squared
 *      error, plain gradient descent);
 *   2. trains a multilayer perceptron, 1 -> 32 -> 32 -> 1 with tanh, to
 *      approximate sin(x) on [-pi, pi] (tendo_sgd_new: gradient descent
 *      with momentum, torch.optim.SGD's).
 *
 * Each parameter is a leaf (tensor_set_requires_grad); the forward pass
 * records itself; tensor_backward fills the parameters' gradients.  The
 * line's update is written out, with grad mode off (torch.no_grad) through
 * the _out forms; the MLP's is an optimizer's step.
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

/* p -= lr * grad(p); then p's gradient is dropped. */
static void step(tensor_f32 *p, double lr)
{
    bool was = tendo_set_grad_enabled(false);
    tensor_f32 *g = CHECK(tensor_grad(p));
    tensor_f32 *lg = CHECK(tensor_mul_scalar(g, lr));

    if (tensor_sub_out(p, p, lg) != TENDO_OK)
        die("sub_out");
    tensor_free(lg);
    tensor_free(g);
    tensor_zero_grad(p);
    tendo_set_grad_enabled(was);
}

/* ---- 1. a line ------------------------------------------------------------------ */

static void fit_line(void)
{
    enum { N = 64 };
    float xs[N], ys[N];
    tensor_f32 *x, *y, *w, *b;

    srand(1);
    for (int i = 0; i < N; i++) {
        xs[i] = -1.0f + 2.0f * (float)i / (N - 1);
        ys[i] = 3.0f * xs[i] - 2.0f + 0.05f * ((float)rand() / (float)RAND_MAX - 0.5f);
    }
    x = CHECK(tensor_f32_from_data(xs, TENDO_SHAPE(N), tendo_cpu()));
    y = CHECK(tensor_f32_from_data(ys, TENDO_SHAPE(N), tendo_cpu()));
    w = CHECK(tensor_f32_zeros(TENDO_SHAPE(1), tendo_cpu()));
    b = CHECK(tensor_f32_zeros(TENDO_SHAPE(1), tendo_cpu()));
    if (tensor_set_requires_grad(w, true) != TENDO_OK || tensor_set_requires_grad(b, true) != TENDO_OK)
        die("set_requires_grad");
    for (int it = 0; it <= 200; it++) {
        tensor_f32 *wx = CHECK(tensor_mul(x, w)); /* w broadcasts over the points */
        tensor_f32 *pred = CHECK(tensor_add(wx, b));
        tensor_f32 *loss = CHECK(tensor_mse_loss(pred, y));

        if (tensor_backward(loss, NULL) != TENDO_OK)
            die("backward");
        if (it % 50 == 0)
            printf("line  step %3d  loss %.6f  w %.4f  b %.4f\n", it, scalar(loss), scalar(w), scalar(b));
        step(w, 0.1);
        step(b, 0.1);
        tensor_free(loss);
        tensor_free(pred);
        tensor_free(wx);
    }
    printf("line  fitted y = %.3f x %+.3f (the points follow y = 3 x - 2)\n", scalar(w), scalar(b));
    tensor_free(x), tensor_free(y), tensor_free(w), tensor_free(b);
}

/* ---- 2. a multilayer perceptron ---------------------------------------------------- */

typedef struct {
    tensor_f32 *w, *b;
} layer;

/* A layer whose parameters opt updates. */
static layer layer_new(int64_t in, int64_t out, uint64_t seed, tendo_optimizer *opt)
{
    layer l;
    tensor_f32 *r = CHECK(tensor_f32_randn(TENDO_SHAPE(in, out), seed, tendo_cpu()));

    l.w = CHECK(tensor_mul_scalar(r, 1.0 / sqrt((double)in))); /* LeCun's scale, for tanh */
    l.b = CHECK(tensor_f32_zeros(TENDO_SHAPE(out), tendo_cpu()));
    if (tensor_set_requires_grad(l.w, true) != TENDO_OK || tensor_set_requires_grad(l.b, true) != TENDO_OK)
        die("set_requires_grad");
    if (tendo_optimizer_add(opt, tensor_erase(l.w)) != TENDO_OK || tendo_optimizer_add(opt, tensor_erase(l.b)) != TENDO_OK)
        die("optimizer_add");
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
    tendo_optimizer *opt = CHECK(tendo_sgd_new(0.05, 0.9, 0.0, false)); /* torch.optim.SGD(lr, momentum) */
    layer l[3] = {layer_new(1, 32, 11, opt), layer_new(32, 32, 12, opt), layer_new(32, 1, 13, opt)};
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
        if (tendo_optimizer_step(opt) != TENDO_OK)
            die("optimizer_step");
        tendo_optimizer_zero_grad(opt);
        tensor_free(loss);
        tensor_free(out);
    }
    printf("mlp   sin(x) on [-pi, pi]: mean squared error %.6f after %d steps (%.4f at the start)\n", last, steps,
           first);
    tendo_optimizer_free(opt);
    for (int k = 0; k < 3; k++)
        tensor_free(l[k].w), tensor_free(l[k].b);
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
