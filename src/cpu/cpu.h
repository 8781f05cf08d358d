/* src/cpu.h - which x86 vector extensions this CPU (and OS) offers, asked
 * once and cached: the runtime dispatch of half.c, vmath.c, gemm.c and
 * transpose.c rests on it. */
#ifndef TENDO_SRC_CPU_H
#define TENDO_SRC_CPU_H

#include <stdbool.h>

enum { TENDO__CPU_AVX2 = 1, TENDO__CPU_FMA = 2, TENDO__CPU_F16C = 4 };

/* True when the CPU has every feature in mask (the AVX2 check includes
 * the OS saving YMM registers); always false off x86.  Thread-safe. */
bool tendo__cpu_has(unsigned mask);

#endif /* TENDO_SRC_CPU_H */
