/* kernels/sim/fiber.c - fibers for the simulated device (see fiber.h).
 *
 * A fiber's stack is an mmap'd region with a guard page at its low end,
 * so an overflow faults instead of corrupting a neighbour.  Each host
 * thread keeps a free list of its fibers; they are unmapped when it exits.
 *
 * Switching: on x86-64, a stack switch that saves the callee-saved
 * registers (about 20 ns a pair); elsewhere
 * swapcontext (about 600 ns a pair, and a system call for the signal mask).
 * Under AddressSanitizer the switches are announced to it. */
/* mmap's MAP_ANONYMOUS and MAP_NORESERVE are not POSIX */
#define _DEFAULT_SOURCE
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/fiber.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define ASAN_FIBERS 1
#else
#define ASAN_FIBERS 0
#endif

#if defined(__x86_64__) && !defined(TENDO_SIM_UCONTEXT)
#define ASM_SWITCH 1
#else
#define ASM_SWITCH 0
#include <ucontext.h>
#endif

#define STACK_SIZE ((size_t)256 << 10)

struct tendo__sim_fiber {
#if ASM_SWITCH
    void *sp;      /* the fiber's saved stack pointer while it is switched out */
    void *host_sp; /* the host's, while the fiber runs */
#else
    ucontext_t ctx, host;
#endif
    void (*entry)(void);
    char *stack; /* the mapping, guard page first */
    size_t size;
    /* AddressSanitizer's view: each side's fake stack while switched out,
     * and the host stack's bounds (learnt on each switch-in) */
    void *host_fake, *fiber_fake;
    const void *host_bottom;
    size_t host_size;
    tendo__sim_fiber *next_free;
};

#if ASM_SWITCH
/* Saves the callee-saved registers on the current stack, stores the stack
 * pointer in *save, and resumes the stack `to` (whose top holds the same
 * layout, or a new fiber's first frame).  The SSE and x87 control words
 * are not switched: nothing on either side changes them. */
void tendo__sim_switch(void **save, void *to);
__asm__(".text\n"
        ".globl tendo__sim_switch\n"
        ".hidden tendo__sim_switch\n"
        ".type tendo__sim_switch,@function\n"
        "tendo__sim_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size tendo__sim_switch, .-tendo__sim_switch\n");
#endif

static __thread tendo__sim_fiber *free_list;
static __thread tendo__sim_fiber *starting; /* the fiber a first switch-in starts */
static pthread_key_t free_key;
static pthread_once_t free_once = PTHREAD_ONCE_INIT;

/* At host thread exit: unmaps the thread's fibers. */
static void free_all(void *unused)
{
    (void)unused;
    while (free_list) {
        tendo__sim_fiber *f = free_list;
        free_list = f->next_free;
        munmap(f->stack, f->size);
        free(f);
    }
}

static void key_init(void) { (void)pthread_key_create(&free_key, free_all); }

/* The first frame of every fiber: calls its entry, which never returns. */
static void fiber_start(void)
{
    tendo__sim_fiber *f = starting;
#if ASAN_FIBERS
    __sanitizer_finish_switch_fiber(NULL, &f->host_bottom, &f->host_size);
#endif
    f->entry();
    abort(); /* unreachable: entries loop forever */
}

#if !ASM_SWITCH
static void fiber_start_uc(void) { fiber_start(); }
#endif

tendo__sim_fiber *tendo__sim_fiber_get(void (*entry)(void))
{
    tendo__sim_fiber *f = free_list;

    if (f) {
        free_list = f->next_free;
    } else {
        pthread_once(&free_once, key_init);
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        (void)pthread_setspecific(free_key, (void *)1); /* so that free_all runs at exit */
        f = calloc(1, sizeof *f);
        if (!f)
            return NULL;
        f->size = STACK_SIZE + page;
        f->stack = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (f->stack == MAP_FAILED) {
            free(f);
            return NULL;
        }
        (void)mprotect(f->stack, page, PROT_NONE);
    }
    f->entry = entry;
    /* a fresh first frame, whether the fiber is new or reused */
#if ASM_SWITCH
    {
        uintptr_t top = ((uintptr_t)(f->stack + f->size)) & ~(uintptr_t)15;
        uint64_t *sp = (uint64_t *)(top - 64); /* so that fiber_start sees rsp % 16 == 8 */
        for (int i = 0; i < 6; i++)
            sp[i] = 0; /* r15 r14 r13 r12 rbx rbp */
        sp[6] = (uint64_t)(uintptr_t)fiber_start;
        f->sp = sp;
    }
#else
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack + (f->size - STACK_SIZE);
    f->ctx.uc_stack.ss_size = STACK_SIZE;
    f->ctx.uc_link = NULL;
    makecontext(&f->ctx, fiber_start_uc, 0);
#endif
    starting = NULL;
    f->next_free = (tendo__sim_fiber *)f; /* marks "not started" */
    return f;
}

void tendo__sim_fiber_put(tendo__sim_fiber *f)
{
    f->next_free = free_list;
    free_list = f;
}

void tendo__sim_fiber_enter(tendo__sim_fiber *f)
{
    if (f->next_free == f) { /* first switch-in: fiber_start reads it */
        starting = f;
        f->next_free = NULL;
    }
#if ASAN_FIBERS
    __sanitizer_start_switch_fiber(&f->host_fake, f->stack + (f->size - STACK_SIZE), STACK_SIZE);
#endif
#if ASM_SWITCH
    tendo__sim_switch(&f->host_sp, f->sp);
#else
    swapcontext(&f->host, &f->ctx);
#endif
#if ASAN_FIBERS
    __sanitizer_finish_switch_fiber(f->host_fake, NULL, NULL);
#endif
}

void tendo__sim_fiber_leave(tendo__sim_fiber *f)
{
#if ASAN_FIBERS
    __sanitizer_start_switch_fiber(&f->fiber_fake, f->host_bottom, f->host_size);
#endif
#if ASM_SWITCH
    tendo__sim_switch(&f->sp, f->host_sp);
#else
    swapcontext(&f->ctx, &f->host);
#endif
#if ASAN_FIBERS
    __sanitizer_finish_switch_fiber(f->fiber_fake, &f->host_bottom, &f->host_size);
#endif
}
