/* src/cpu.c - CPU feature detection for the runtime dispatch (cpu.h). */
#include <stdatomic.h>

#include "cpu/cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <cpuid.h>

/* The features as TENDO__CPU_* bits.  GCC knows every name in
 * __builtin_cpu_supports; clang before 16 rejects "f16c" and "fma", so
 * clang asks cpuid (leaf 1, ECX) for those. */
static unsigned detect(void)
{
    unsigned f = 0;
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
    return f;
}
#else
static unsigned detect(void) { return 0; }
#endif

/* The detected bits, or'ed with KNOWN once asked; racing first calls all
 * store the same value. */
#define KNOWN 0x80000000u
static atomic_uint features;

bool tendo__cpu_has(unsigned mask)
{
    unsigned f = atomic_load_explicit(&features, memory_order_relaxed);

    if (!(f & KNOWN)) {
        f = detect() | KNOWN;
        atomic_store_explicit(&features, f, memory_order_relaxed);
    }
    return (f & mask) == mask;
}
