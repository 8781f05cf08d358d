/* src/cpu/cpu.c - CPU feature detection for the runtime dispatch (cpu.h).
 *
 * TENDO_CPU in the environment caps what the dispatch may use, so that one
 * machine can test every path: "portable" (plain C everywhere), "avx2"
 * (AVX2, FMA and F16C at most: no AVX-512), "avx512" (AVX-512 F/BW/VL/DQ
 * without the BF16, VNNI and FP16 extensions) or "avx512bf16" (AVX-512 with
 * those extensions, no AMX tiles).  Read once, at the first question. */
#define _DEFAULT_SOURCE /* syscall */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "tendo/core.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Whether AMX tiles with bf16 dot products may run here: the CPU has them
 * (leaf 7 EDX: AMX-BF16 bit 22, AMX-TILE bit 24), the OS saves tile state
 * (XCR0 bits 17 and 18) and Linux grants this process the tile data
 * (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA: until asked, the
 * first tile instruction faults).  The grant covers every thread. */
static bool amx_bf16_usable(unsigned edx7)
{
#if defined(__linux__) && defined(__x86_64__)
    unsigned eax, ebx, ecx, edx, xcr0_lo, xcr0_hi;

    if ((edx7 & ((1u << 22) | (1u << 24))) != ((1u << 22) | (1u << 24)))
        return false;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_OSXSAVE))
        return false;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    if ((xcr0_lo & (3u << 17)) != (3u << 17))
        return false;
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    (void)edx7;
    return false;
#endif
}

/* The features as TENDO__CPU_* bits, AMX only where allow has it (asking
 * Linux for the tile data grows every signal frame of the process, so a
 * capped level does not ask).  GCC knows every name in
 * __builtin_cpu_supports; clang before 16 rejects "f16c" and "fma", so
 * clang asks cpuid (leaf 1, ECX) for those. */
static unsigned detect(unsigned allow)
{
    unsigned f = 0, eax7, ebx7, ecx7 = 0, edx7 = 0;
    /* leaf 7: AVX512_VNNI (ECX bit 11) and AVX512_FP16 (EDX bit 23), which
     * not every compiler's __builtin_cpu_supports knows */
    int leaf7 = __get_cpuid_count(7, 0, &eax7, &ebx7, &ecx7, &edx7);
#if defined(__clang__)
    unsigned eax, ebx, ecx = 0, edx;
    int leaf1 = __get_cpuid(1, &eax, &ebx, &ecx, &edx);
#endif

    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        f |= TENDO__CPU_AVX2;
#if defined(__clang__)
    if (leaf1 && (ecx & bit_FMA))
        f |= TENDO__CPU_FMA;
    if (leaf1 && (ecx & bit_F16C))
        f |= TENDO__CPU_F16C;
#else
    if (__builtin_cpu_supports("fma"))
        f |= TENDO__CPU_FMA;
    if (__builtin_cpu_supports("f16c"))
        f |= TENDO__CPU_F16C;
#endif
    /* libgcc's and compiler-rt's answers include the OS's XCR0 check */
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        f |= TENDO__CPU_AVX512;
    if ((f & TENDO__CPU_AVX512) && __builtin_cpu_supports("avx512bf16"))
        f |= TENDO__CPU_AVX512BF16;
    if ((f & TENDO__CPU_AVX512) && leaf7 && (ecx7 & (1u << 11)))
        f |= TENDO__CPU_AVX512VNNI;
    if ((f & TENDO__CPU_AVX512) && leaf7 && (edx7 & (1u << 23)))
        f |= TENDO__CPU_AVX512FP16;
    if ((f & TENDO__CPU_AVX512BF16) && (allow & TENDO__CPU_AMXBF16) && leaf7 && amx_bf16_usable(edx7))
        f |= TENDO__CPU_AMXBF16;
    return f;
}
#else
static unsigned detect(unsigned allow)
{
    (void)allow;
    return 0;
}
#endif

/* The detected bits, or'ed with KNOWN once asked; racing first calls all
 * store the same value. */
#define KNOWN 0x80000000u
static atomic_uint features;

/* The features TENDO_CPU allows (all of them when it is unset or unknown). */
static unsigned allowed(void)
{
    const char *level = getenv("TENDO_CPU");

    if (level && !strcmp(level, "portable"))
        return 0;
    if (level && !strcmp(level, "avx2"))
        return TENDO__CPU_AVX2 | TENDO__CPU_FMA | TENDO__CPU_F16C;
    if (level && !strcmp(level, "avx512"))
        return TENDO__CPU_AVX2 | TENDO__CPU_FMA | TENDO__CPU_F16C | TENDO__CPU_AVX512;
    if (level && !strcmp(level, "avx512bf16"))
        return ~(KNOWN | TENDO__CPU_AMXBF16);
    return ~KNOWN;
}

/* The features the dispatch uses, detected (and capped) on first use. */
static unsigned used(void)
{
    unsigned f = atomic_load_explicit(&features, memory_order_relaxed);

    if (!(f & KNOWN)) {
        unsigned allow = allowed();
        f = (detect(allow) & allow) | KNOWN;
        atomic_store_explicit(&features, f, memory_order_relaxed);
    }
    return f;
}

bool tendo__cpu_has(unsigned mask) { return (used() & mask) == mask; }

/* See cpu.h: libgcc's (or compiler-rt's) model of the CPU, which detect()
 * reads too. */
bool tendo__cpu_amd(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_is("amd");
#else
    return false;
#endif
}

static char described[128];
static pthread_once_t described_once = PTHREAD_ONCE_INIT;

static void describe(void)
{
    unsigned f = used();
    const char *level = getenv("TENDO_CPU");

    snprintf(described, sizeof described, "%s%s%s%s%s%s%s%s%s%s%s", f & TENDO__CPU_AVX2 ? "avx2 " : "",
             f & TENDO__CPU_FMA ? "fma " : "", f & TENDO__CPU_F16C ? "f16c " : "",
             f & TENDO__CPU_AVX512 ? "avx512 " : "", f & TENDO__CPU_AVX512BF16 ? "avx512bf16 " : "",
             f & TENDO__CPU_AVX512VNNI ? "avx512vnni " : "", f & TENDO__CPU_AVX512FP16 ? "avx512fp16 " : "",
             f & TENDO__CPU_AMXBF16 ? "amxbf16 " : "",
             f & ~KNOWN ? "" : "portable ", level ? "(TENDO_CPU=" : "", level ? level : "");
    if (level)
        strncat(described, ")", sizeof described - strlen(described) - 1);
    else if (described[0])
        described[strlen(described) - 1] = '\0';
}

const char *tendo_cpu_features(void)
{
    pthread_once(&described_once, describe);
    return described;
}
