/* src/cpu/vmath-kernels.h - the vector f32 kernels of src/cpu/vmath.c
 * (exp, log, tanh, sigmoid, silu, gelu and both derivatives, rsqrt, and the loops over arrays),
 * written once for any vector width.  vmath.c includes this file once per
 * width, with VMATH_WIDTH 8 (AVX2+FMA, __m256) or 16 (AVX-512, __m512);
 * each function's name gets the width as a suffix (VM(exp) is exp_8 or
 * exp_16), and everything defined here but the functions is undefined at
 * the end.  Every operation is the same IEEE operation on each lane at
 * either width, so the two give the same bits (t-vmath checks both
 * against the same bounds, with TENDO_CPU choosing the width).
 *
 * Comparisons give a mask (VMASK): a vector of all-ones lanes on AVX2, a
 * k-register on AVX-512; PICK, VM_AND, VM_OR, VM_KEEP and VM_ALL work on
 * either. */

#if VMATH_WIDTH == 8
#define VM(name) name##_8
#define VM_PFX _mm256
#define VM_TARGET __attribute__((target("avx2,fma")))
#define VF __m256
#define VI __m256i
#define VMASK __m256
#define VF_SET1 _mm256_set1_ps
#define VF_ZERO _mm256_setzero_ps
#define VF_LOADU _mm256_loadu_ps
#define VF_STOREU _mm256_storeu_ps
#define VF_ADD _mm256_add_ps
#define VF_SUB _mm256_sub_ps
#define VF_MUL _mm256_mul_ps
#define VF_DIV _mm256_div_ps
#define VF_MIN _mm256_min_ps
#define VF_MAX _mm256_max_ps
#define VF_FMADD _mm256_fmadd_ps
#define VF_FNMADD _mm256_fnmadd_ps
#define VF_FMSUB _mm256_fmsub_ps
#define VF_SQRT _mm256_sqrt_ps
#define VF_AND _mm256_and_ps
#define VF_OR _mm256_or_ps
#define VF_XOR _mm256_xor_ps
#define VF_ANDNOT _mm256_andnot_ps
#define VF_ROUND(x) _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VF_CVTT _mm256_cvttps_epi32
#define VF_AS_I _mm256_castps_si256
#define VF_CMP _mm256_cmp_ps
#define VI_CVTF _mm256_cvtepi32_ps
#define VI_SRAI _mm256_srai_epi32
#define VI_SLLI _mm256_slli_epi32
#define VI_ADD _mm256_add_epi32
#define VI_SUB _mm256_sub_epi32
#define VI_AND _mm256_and_si256
#define VI_OR _mm256_or_si256
#define VI_SET1 _mm256_set1_epi32
#define VI_AS_F _mm256_castsi256_ps
#define VI_TESTZ(x, m) _mm256_testz_si256(x, m) /* no lane of x has a bit of m */
#define PICK(m, a, b) _mm256_blendv_ps(b, a, m) /* a where m, else b */
#define VM_AND _mm256_and_ps
#define VM_OR _mm256_or_ps
#define VM_KEEP(m, v) _mm256_and_ps(m, v) /* v where m, else 0 */
#define VM_ALL(m) (_mm256_movemask_ps(m) == 0xff)
#elif VMATH_WIDTH == 16
#define VM(name) name##_16
#define VM_PFX _mm512
#define VM_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))
#define VF __m512
#define VI __m512i
#define VMASK __mmask16
#define VF_SET1 _mm512_set1_ps
#define VF_ZERO _mm512_setzero_ps
#define VF_LOADU _mm512_loadu_ps
#define VF_STOREU _mm512_storeu_ps
#define VF_ADD _mm512_add_ps
#define VF_SUB _mm512_sub_ps
#define VF_MUL _mm512_mul_ps
#define VF_DIV _mm512_div_ps
#define VF_MIN _mm512_min_ps
#define VF_MAX _mm512_max_ps
#define VF_FMADD _mm512_fmadd_ps
#define VF_FNMADD _mm512_fnmadd_ps
#define VF_FMSUB _mm512_fmsub_ps
#define VF_SQRT _mm512_sqrt_ps
#define VF_AND _mm512_and_ps
#define VF_OR _mm512_or_ps
#define VF_XOR _mm512_xor_ps
#define VF_ANDNOT _mm512_andnot_ps
#define VF_ROUND(x) _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VF_CVTT _mm512_cvttps_epi32
#define VF_AS_I _mm512_castps_si512
#define VF_CMP _mm512_cmp_ps_mask
#define VI_CVTF _mm512_cvtepi32_ps
#define VI_SRAI _mm512_srai_epi32
#define VI_SLLI _mm512_slli_epi32
#define VI_ADD _mm512_add_epi32
#define VI_SUB _mm512_sub_epi32
#define VI_AND _mm512_and_si512
#define VI_OR _mm512_or_si512
#define VI_SET1 _mm512_set1_epi32
#define VI_AS_F _mm512_castsi512_ps
#define VI_TESTZ(x, m) (_mm512_test_epi32_mask(x, m) == 0)
#define PICK(m, a, b) _mm512_mask_blend_ps(m, b, a)
#define VM_AND(a, b) ((__mmask16)((a) & (b)))
#define VM_OR(a, b) ((__mmask16)((a) | (b)))
#define VM_KEEP(m, v) _mm512_maskz_mov_ps(m, v)
#define VM_ALL(m) ((m) == 0xffff)
#else
#error "VMATH_WIDTH must be 8 or 16"
#endif

#define K(c) VF_SET1(c)                            /* c in every lane */
#define FMAK(a, b, c) VF_FMADD(a, b, VF_SET1(c))    /* a*b + c, one rounding */
#define SIGN_OF(x) VF_AND(x, VF_SET1(-0.0f))       /* the sign bit of x alone */
#define ABS(x) VF_ANDNOT(VF_SET1(-0.0f), x)        /* |x| */

/* ---- exp building blocks ---- */

/* k = round(x / ln2), an integral float. */
VM_TARGET static inline VF VM(exp_quot)(VF x)
{
    return VF_ROUND(VF_MUL(x, K(LOG2E)));
}

/* x - k ln2; the first step is exact. */
VM_TARGET static inline VF VM(exp_rem)(VF x, VF k)
{
    VF r = VF_FNMADD(k, K(LN2_HI), x);
    return VF_FNMADD(k, K(LN2_LO), r);
}

/* exp(r) - 1 for |r| <= 0.347, as r + r^2 Q(r). */
VM_TARGET static inline VF VM(exp_poly_m1)(VF r)
{
    VF q = FMAK(K(E4), r, E3);
    q = FMAK(q, r, E2);
    q = FMAK(q, r, E1);
    q = FMAK(q, r, E0);
    return VF_FMADD(VF_MUL(r, r), q, r);
}

/* exp(r) for |r| <= 0.347 (within 0.8 ulp, in [0.7, 1.42]). */
VM_TARGET static inline VF VM(exp_poly)(VF r)
{
    return VF_ADD(K(1.0f), VM(exp_poly_m1)(r));
}

/* 2^k1 and 2^k2, both normal, with k1 + k2 = k (k integral, |k| <= 252):
 * p*s1*s2 is then p*2^k rounded once, underflowing gradually. */
VM_TARGET static inline void VM(exp_scales)(VF k, VF *s1, VF *s2)
{
    VI ki = VF_CVTT(k);
    VI k1 = VI_SRAI(ki, 1);
    VI k2 = VI_SUB(ki, k1);
    VI bias = VI_SET1(127);
    *s1 = VI_AS_F(VI_SLLI(VI_ADD(k1, bias), 23));
    *s2 = VI_AS_F(VI_SLLI(VI_ADD(k2, bias), 23));
}

/* p*2^k when that is a normal float (k integral). */
VM_TARGET static inline VF VM(exp_scale_normal)(VF p, VF k)
{
    VI e = VI_SLLI(VF_CVTT(k), 23);
    return VI_AS_F(VI_ADD(VF_AS_I(p), e));
}

/* ---- kernels: each returns f of every lane ---- */

/* exp(x) for any x: argument clamped, 2^k applied in two steps. */
VM_TARGET static inline VF VM(exp_general)(VF x)
{
    /* max/min return their second operand when either is NaN. */
    VF xc = VF_MIN(K(EXP_HI), VF_MAX(K(EXP_LO), x));
    VF k = VM(exp_quot)(xc);
    VF p = VM(exp_poly)(VM(exp_rem)(xc, k));
    VF s1, s2;
    VM(exp_scales)(k, &s1, &s2);
    return VF_MUL(VF_MUL(p, s1), s2);
}

/* exp(x); the usual case, every lane with -125 <= k <= 127 (so that p*2^k
 * is normal), is scaled by adding k to the exponent field. */
VM_TARGET static inline VF VM(exp)(VF x)
{
    VF k = VM(exp_quot)(x);
    /* kb = k + 125 in [0, 252] iff kb and kb + 3 are both in [0, 255];
     * huge, inf and NaN x give INT_MIN here, so fail the test too. */
    VI kb = VI_ADD(VF_CVTT(k), VI_SET1(125));
    VI kb3 = VI_ADD(kb, VI_SET1(3));
    if (!VI_TESTZ(VI_OR(kb, kb3), VI_SET1(~0xff)))
        return VM(exp_general)(x);
    return VM(exp_scale_normal)(VM(exp_poly)(VM(exp_rem)(x, k)), k);
}

/* log(x * 2^-kadj) for normal x > 0: kadj is 0, or 23 for a subnormal
 * input already scaled by 2^23. */
VM_TARGET static inline VF VM(log_core)(VF x, VF kadj)
{
    VI ix = VF_AS_I(x);
    VI t = VI_SUB(ix, VI_SET1(LOG_OFF));
    VF k = VF_SUB(VI_CVTF(VI_SRAI(t, 23)), kadj);
    VI iz = VI_SUB(ix, VI_AND(t, VI_SET1(-0x800000)));
    VF f = VF_SUB(VI_AS_F(iz), K(1.0f)); /* exact */
    /* q = -1/2 + f (L0 + L1 f + ... + L7 f^7), Estrin's scheme (shorter
     * dependency chains than Horner's). */
    VF f2 = VF_MUL(f, f);
    VF f4 = VF_MUL(f2, f2);
    VF q01 = FMAK(K(L1), f, L0), q23 = FMAK(K(L3), f, L2);
    VF q45 = FMAK(K(L5), f, L4), q67 = FMAK(K(L7), f, L6);
    VF q03 = VF_FMADD(q23, f2, q01);
    VF q47 = VF_FMADD(q67, f2, q45);
    VF q = FMAK(VF_FMADD(q47, f4, q03), f, -0.5f);
    /* k*LOG_LN2_HI + f as hi + lo exactly (|k*LOG_LN2_HI| >= |f| or k = 0). */
    VF a = VF_MUL(k, K(LOG_LN2_HI));
    VF hi = VF_ADD(a, f);
    VF lo = VF_SUB(f, VF_SUB(hi, a));
    VF tail = VF_FMADD(f2, q, VF_MUL(k, K(LOG_LN2_LO)));
    return VF_ADD(hi, VF_ADD(lo, tail));
}

/* log(x) for lanes that may be subnormal, zero, negative, inf or NaN. */
VM_TARGET static inline VF VM(log_special)(VF x)
{
    VMASK tiny = VF_CMP(x, K(0x1p-126f), _CMP_LT_OQ);
    VF xs = PICK(tiny, VF_MUL(x, K(0x1p23f)), x);
    VF y = VM(log_core)(xs, VM_KEEP(tiny, K(23.0f)));
    /* Not in (0, inf): 0 -> -inf, < 0 -> NaN, inf and NaN -> x. */
    VMASK bad = VM_OR(VF_CMP(x, VF_ZERO(), _CMP_NGT_UQ),
                              VF_CMP(x, K(INFINITY), _CMP_EQ_OQ));
    VF v = PICK(VF_CMP(x, VF_ZERO(), _CMP_EQ_OQ), K(-INFINITY), x);
    v = PICK(VF_CMP(x, VF_ZERO(), _CMP_LT_OQ), K(NAN), v);
    return PICK(bad, v, y);
}

/* log(x). */
VM_TARGET static inline VF VM(log)(VF x)
{
    VMASK normal = VM_AND(VF_CMP(x, K(0x1p-126f), _CMP_GE_OQ),
                                  VF_CMP(x, K(INFINITY), _CMP_LT_OQ));
    if (VM_ALL(normal))
        return VM(log_core)(x, VF_ZERO());
    return VM(log_special)(x);
}

/* tanh(x): odd polynomial near 0, 1 - 2/(exp(2|x|) + 1) beyond. */
VM_TARGET static inline VF VM(tanh)(VF x)
{
    VF a = ABS(x);
    VF s = VF_MUL(x, x);
    VF t = FMAK(K(T4), s, T3);
    t = FMAK(t, s, T2);
    t = FMAK(t, s, T1);
    t = FMAK(t, s, T0);
    VF small = VF_FMADD(VF_MUL(a, s), t, a);
    /* tanh(20) rounds to 1; 2|x| <= 40 keeps exp normal.  NaN stays. */
    VF a2 = VF_MIN(K(40.0f), VF_ADD(a, a));
    VF k = VM(exp_quot)(a2);
    VF e = VM(exp_scale_normal)(VM(exp_poly)(VM(exp_rem)(a2, k)), k);
    VF big = VF_SUB(K(1.0f), VF_DIV(K(2.0f), VF_ADD(e, K(1.0f))));
    VF y = PICK(VF_CMP(a, K(TANH_SMALL), _CMP_LT_OQ), small, big);
    return VF_OR(y, SIGN_OF(x));
}

/* sigmoid(x) as q*2^k for x < 0 (with exp(x) = p*2^k, both scales in
 * *s1, *s2) and as q for x >= 0, q within about 0.6 ulp: 1 + e and
 * p = 1 + (e^r - 1) are kept as exact sums hi + lo, and the quotient gets
 * one correction step from the division's exact remainder. */
VM_TARGET static inline VF VM(sigmoid_core)(VF x, VMASK neg, VF *s1, VF *s2)
{
    VF one = K(1.0f);
    VF na = VF_MAX(K(EXP_LO), VF_OR(x, K(-0.0f))); /* -|x| */
    VF k = VM(exp_quot)(na);
    VF r = VM(exp_rem)(na, k);
    VF t = VM(exp_poly_m1)(r);
    VF p = VF_ADD(one, t);
    VF pl = VF_ADD(VF_SUB(one, p), t); /* 1 + t = p + pl */
    VM(exp_scales)(k, s1, s2);
    VF e = VF_MUL(VF_MUL(p, *s1), *s2); /* exp(-|x|) <= 1 */
    VF el = VF_MUL(VF_MUL(pl, *s1), *s2);
    VF dh = VF_ADD(one, e);
    VF dl = VF_ADD(VF_ADD(VF_SUB(one, dh), e), el);
    VF nh = PICK(neg, p, one);
    VF nl = VM_KEEP(neg, pl);
    VF q0 = VF_DIV(nh, dh);
    VF res = VF_FNMADD(q0, dh, nh); /* exact */
    /* (nh + nl)/(dh + dl) = q0 + (res + nl - q0 dl)/dh, to first order;
     * 1/dh = q0/nh, and 1/nh = 1/p ~ 1 - r + r^2/2 (to 1%) for x < 0. */
    VF inv_nh = PICK(neg, FMAK(r, FMAK(r, K(0.5f), -1.0f), 1.0f), one);
    VF c = VF_FNMADD(q0, dl, VF_ADD(res, nl));
    return VF_FMADD(VF_MUL(q0, inv_nh), c, q0);
}

/* 1/(1+exp(-x)). */
VM_TARGET static inline VF VM(sigmoid)(VF x)
{
    VMASK neg = VF_CMP(x, VF_ZERO(), _CMP_LT_OQ);
    VF s1, s2;
    VF q = VM(sigmoid_core)(x, neg, &s1, &s2);
    return PICK(neg, VF_MUL(VF_MUL(q, s1), s2), q);
}

/* x*sigmoid(x); for x < 0 the product is formed before the 2^k scaling,
 * so the result underflows gradually and accurately. */
VM_TARGET static inline VF VM(silu)(VF x)
{
    VMASK neg = VF_CMP(x, VF_ZERO(), _CMP_LT_OQ);
    VF s1, s2;
    VF q = VM(sigmoid_core)(x, neg, &s1, &s2);
    /* x clamped like exp's argument, so that -inf gives -0, not -inf*0. */
    VF xq = VF_MUL(VF_MAX(K(EXP_LO), x), q);
    return PICK(neg, VF_MUL(VF_MUL(xq, s1), s2), VF_MUL(x, q));
}

/* silu'(x) = s (1 + x (1 - s)), s = sigmoid(x); x clamped to [-200, 40]
 * in the product (s is 0 below, 1 - s is 0 above), so that -inf gives -0
 * (the limit from below) and +inf 1, not inf * 0. */
VM_TARGET static inline VF VM(silu_deriv)(VF x)
{
    VF one = K(1.0f);
    VF s = VM(sigmoid)(x);
    VF xc = VF_MIN(K(40.0f), VF_MAX(K(-200.0f), x)); /* NaN stays */
    return VF_MUL(s, VF_FMADD(xc, VF_SUB(one, s), one));
}

/* What gelu and its derivative share: with a = min(|x|, GELU_MAX),
 * F = Phi(-a) = 0.5 G(t) exp(-a^2/2), returned as F / 2^k with the
 * scales in *s1, *s2 (F = f s1 s2), and *e = exp(-a^2/2) / 2^k.  a^2/2
 * is carried as hi + lo so that exp's argument is exact; the 2^k scaling
 * is left to the caller, after its products, as in silu. */
VM_TARGET static inline VF VM(gelu_tail)(VF x, VF *e, VF *s1, VF *s2)
{
    VF one = K(1.0f);
    VF a = VF_MIN(K(GELU_MAX), ABS(x));
    /* t = 1/(1 + K a); K a is exact, 1 + K a = d + dl exactly. */
    VF ka = VF_MUL(K(GELU_K), a);
    VF d = VF_ADD(one, ka);
    VF dl = VF_SUB(VF_MIN(one, ka),
                              VF_SUB(d, VF_MAX(one, ka)));
    VF t = VF_DIV(one, d);
    /* G(t) by Estrin's scheme. */
    VF t2 = VF_MUL(t, t);
    VF t4 = VF_MUL(t2, t2);
    VF g03 = VF_FMADD(FMAK(K(G3), t, G2), t2, FMAK(K(G1), t, G0));
    VF g47 = VF_FMADD(FMAK(K(G7), t, G6), t2, FMAK(K(G5), t, G4));
    VF g810 = VF_FMADD(K(G10), t2, FMAK(K(G9), t, G8));
    VF g = VF_FMADD(VF_FMADD(g810, t4, g47), t4, g03);
    /* G is sensitive to t (t G'/G up to 3): correct for t's error dt/t =
     * (1 - t d) - t dl, with dG/dt = (sqrt(2/pi) - a G)/(K t^2). */
    VF dt = VF_FNMADD(t, dl, VF_FNMADD(t, d, one));
    VF slope = VF_MUL(VF_FNMADD(a, g, K(0x1.988454p-1f)), d);
    g = VF_FMADD(VF_MUL(slope, K(1.0f / GELU_K)), dt, g);
    VF h = VF_MUL(a, a);
    VF l = VF_FMSUB(a, a, h); /* a*a = h + l exactly */
    VF arg = VF_MUL(h, K(-0.5f));
    VF k = VM(exp_quot)(arg);
    VF r = VF_FNMADD(K(0.5f), l, VM(exp_rem)(arg, k));
    VF em1 = VM(exp_poly_m1)(r);
    VF gh = VF_MUL(g, K(0.5f));
    *e = VF_ADD(em1, one);
    VM(exp_scales)(k, s1, s2);
    return VF_FMADD(gh, em1, gh); /* F / 2^k */
}

/* gelu(x) = x Phi(x): x F for x < 0 and x (1 - F) for x >= 0. */
VM_TARGET static inline VF VM(gelu)(VF x)
{
    VF e, s1, s2;
    VF f = VM(gelu_tail)(x, &e, &s1, &s2);
    VF xc = VF_MAX(K(-GELU_MAX), x); /* -inf -> -15 -> -0; NaN stays */
    VF yneg = VF_MUL(VF_MUL(VF_MUL(xc, f), s1), s2);
    VF phi = VF_SUB(K(1.0f), VF_MUL(VF_MUL(f, s1), s2));
    VF ypos = VF_MUL(x, phi);
    return PICK(VF_CMP(x, VF_ZERO(), _CMP_LT_OQ), yneg, ypos);
}

/* gelu'(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi): F or
 * 1 - F, plus x e / sqrt(2 pi) (x clamped to +-GELU_MAX, where e is 0,
 * so that +inf gives 1).  At and below -GELU_MAX the value (negative, under
 * 1e-48) is -0 whatever a compiler contracts into FMAs. */
VM_TARGET static inline VF VM(gelu_deriv)(VF x)
{
    VF e, s1, s2;
    VF f = VM(gelu_tail)(x, &e, &s1, &s2);
    VF xc = VF_MIN(K(GELU_MAX), VF_MAX(K(-GELU_MAX), x)); /* NaN stays */
    VF cdf = VF_MUL(VF_MUL(f, s1), s2);
    VF xpdf = VF_MUL(VF_MUL(VF_MUL(VF_MUL(xc, K(0x1.988454p-2f)), e), s1), s2); /* 1/sqrt(2 pi) */
    cdf = PICK(VF_CMP(x, VF_ZERO(), _CMP_LT_OQ), cdf, VF_SUB(K(1.0f), cdf));
    return PICK(VF_CMP(x, K(-GELU_MAX), _CMP_LE_OQ), K(-0.0f), VF_ADD(cdf, xpdf));
}

/* 1/sqrt(x): y = 1/s with s = sqrt(x), then one correction step from the
 * exact residuals 1 - y s and x - s^2, giving nearly always the correctly
 * rounded result.  x < 2^-100 is scaled by 2^50 first so that x - s^2 is
 * exact; zero, negative, inf and NaN keep the plain IEEE 1/sqrt(x). */
VM_TARGET static inline VF VM(rsqrt)(VF x)
{
    VMASK tiny = VF_CMP(x, K(0x1p-100f), _CMP_LT_OQ);
    VF xs = PICK(tiny, VF_MUL(x, K(0x1p50f)), x);
    VF s = VF_SQRT(xs);
    VF y = VF_DIV(K(1.0f), s);
    VF rho = VF_FNMADD(y, s, K(1.0f)); /* 1 - y s, exact */
    VF sig = VF_FNMADD(s, s, xs);       /* x - s^2, exact */
    /* 1/sqrt(x) = y (1 + rho - sig/(2 s^2)) to first order. */
    VF c = VF_FNMADD(VF_MUL(VF_MUL(sig, y), y), K(0.5f), rho);
    VF yc = VF_FMADD(y, c, y);
    yc = PICK(tiny, VF_MUL(yc, K(0x1p25f)), yc);
    VMASK ok = VM_AND(VF_CMP(x, VF_ZERO(), _CMP_GT_OQ),
                              VF_CMP(x, K(INFINITY), _CMP_LT_OQ));
    return PICK(ok, yc, y);
}

/* ---- loops over arrays ---- */

/* VM(v##fn)(x, y, n): y[i] = fn(x[i]), through vmath.c's VMATH_LOOP_T
 * (VMATH_LOOP_AT expands VM_PFX before VMATH_LOOP_T pastes it). */
#define VMATH_LOOP_AT(name, kernel, pfx) VMATH_LOOP_T(name, kernel, float, VMATH_WIDTH, pfx, ps, VM_TARGET)
#define VMATH_LOOP(fn) VMATH_LOOP_AT(VM(v##fn), VM(fn), VM_PFX)

VMATH_LOOP(exp)
VMATH_LOOP(log)
VMATH_LOOP(tanh)
VMATH_LOOP(sigmoid)
VMATH_LOOP(silu)
VMATH_LOOP(silu_deriv)
VMATH_LOOP(gelu)
VMATH_LOOP(gelu_deriv)
VMATH_LOOP(rsqrt)

/* tendo__vexp_shift_sum_f32 at this width, in its order (vmath.h):
 * element i goes into lane i % 16 of 16 / W accumulators taken in turn;
 * the tail goes through a buffer padded with -inf (exp gives 0 there). */
VM_TARGET static float VM(vexp_shift_sum)(float *x, float shift, int64_t n)
{
    enum { W = VMATH_WIDTH, ACCS = 16 / VMATH_WIDTH };
    VF acc[ACCS], sh = K(shift);
    float lane[16];
    int64_t i = 0;

    for (int a = 0; a < ACCS; a++)
        acc[a] = VF_ZERO();
    for (; i + W <= n; i += W) {
        VF y = VM(exp)(VF_SUB(VF_LOADU(x + i), sh));
        VF_STOREU(x + i, y);
        acc[i / W % ACCS] = VF_ADD(acc[i / W % ACCS], y);
    }
    if (i < n) {
        for (int l = 0; l < W; l++)
            lane[l] = i + l < n ? x[i + l] - shift : -INFINITY;
        VF y = VM(exp)(VF_LOADU(lane));
        VF_STOREU(lane, y);
        memcpy(x + i, lane, (size_t)(n - i) * sizeof *x);
        acc[i / W % ACCS] = VF_ADD(acc[i / W % ACCS], y);
    }
    for (int a = 0; a < ACCS; a++)
        VF_STOREU(lane + a * W, acc[a]);
    return tendo__vmath_fold16(lane);
}

/* tendo__vadamw_f32 at this width over the first n - n % W elements; the
 * caller does the rest with the scalar loop.  Each step is the scalar
 * loop's IEEE operation (no FMA), so every width gives its bits. */
VM_TARGET static int64_t VM(vadamw)(float *p, const float *g, float *m, float *v, int64_t n, const float *c)
{
    enum { W = VMATH_WIDTH };
    const VF decay = K(c[0]), wt = K(c[1]), beta2 = K(c[2]), wt2 = K(c[3]), step = K(c[4]), bc2 = K(c[5]);
    const VF eps = K(c[6]), rest = K(1.0f - c[1]);
    const bool near = c[1] < 0.5f;
    int64_t i = 0;

    for (; i + W <= n; i += W) {
        VF gi = VF_LOADU(g + i), mi = VF_LOADU(m + i), vi = VF_LOADU(v + i);
        VF pi = VF_MUL(VF_LOADU(p + i), decay);

        mi = near ? VF_ADD(mi, VF_MUL(wt, VF_SUB(gi, mi))) : VF_SUB(gi, VF_MUL(VF_SUB(gi, mi), rest));
        vi = VF_ADD(VF_MUL(vi, beta2), VF_MUL(VF_MUL(wt2, gi), gi));
        VF_STOREU(m + i, mi);
        VF_STOREU(v + i, vi);
        VF_STOREU(p + i, VF_ADD(pi, VF_DIV(VF_MUL(step, mi), VF_ADD(VF_DIV(VF_SQRT(vi), bc2), eps))));
    }
    return i;
}

/* tendo__vadd_pairs_f32 at this width over the first n - n % W elements;
 * the caller does the rest.  One IEEE add (and a multiply unless scale is
 * 1) per element, a first, as the scalar loop does. */
VM_TARGET static int64_t VM(vadd_pairs)(const float *a, const float *b, float *out, int64_t n, float scale)
{
    enum { W = VMATH_WIDTH };
    const VF s = K(scale);
    const bool times = scale != 1.0f;
    int64_t i = 0;

    for (; i + W <= n; i += W) {
        VF sum = VF_ADD(VF_LOADU(a + i), VF_LOADU(b + i));
        VF_STOREU(out + i, times ? VF_MUL(sum, s) : sum);
    }
    return i;
}

#undef VMATH_LOOP
#undef VMATH_LOOP_AT
#undef K
#undef FMAK
#undef SIGN_OF
#undef ABS
#undef PICK
#undef VF
#undef VF_ADD
#undef VF_AND
#undef VF_ANDNOT
#undef VF_AS_I
#undef VF_CMP
#undef VF_CVTT
#undef VF_DIV
#undef VF_FMADD
#undef VF_FMSUB
#undef VF_FNMADD
#undef VF_LOADU
#undef VF_MAX
#undef VF_MIN
#undef VF_MUL
#undef VF_OR
#undef VF_ROUND
#undef VF_SET1
#undef VF_SQRT
#undef VF_STOREU
#undef VF_SUB
#undef VF_XOR
#undef VF_ZERO
#undef VI
#undef VI_ADD
#undef VI_AND
#undef VI_AS_F
#undef VI_CVTF
#undef VI_OR
#undef VI_SET1
#undef VI_SLLI
#undef VI_SRAI
#undef VI_SUB
#undef VI_TESTZ
#undef VM
#undef VMASK
#undef VM_ALL
#undef VM_AND
#undef VM_KEEP
#undef VM_OR
#undef VM_PFX
#undef VM_TARGET
