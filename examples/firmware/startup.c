/* Startup code for QEMU's mps2-an386 (Cortex-M4F) and mps2-an500
 * (Cortex-M7): the vector table, the FPU (when the build uses one) switched
 * on before any float instruction runs, .bss cleared, semihosting
 * set up (newlib's librdimon: printf goes to the host's stdout) and main's
 * status handed to the host through exit(). */
#include <stdint.h>
#include <stdlib.h>

extern int main(void);
extern void initialise_monitor_handles(void);
extern uint32_t __bss_start__[], __bss_end__[], __stack[];

void reset_handler(void);
void fault_handler(void);
void _init(void);
void _fini(void);

/* newlib's exit() calls the (empty here) _fini of crti.o, which
 * -nostartfiles leaves out. */
void _init(void) {}
void _fini(void) {}

__attribute__((section(".vectors"), used))
static void (*const vectors[16])(void) = {
    (void (*)(void))__stack, reset_handler, fault_handler, fault_handler, fault_handler, fault_handler,
    fault_handler,
};

void fault_handler(void)
{
    exit(99);
}

void reset_handler(void)
{
#if defined(__ARM_FP)
    /* CPACR: full access to coprocessors 10 and 11 (the FPU). */
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88u;
    *cpacr |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    for (uint32_t *p = __bss_start__; p < __bss_end__; p++)
        *p = 0;
    initialise_monitor_handles();
    exit(main());
}
