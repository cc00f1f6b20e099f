/* Shows the process a CPU without some of its instruction sets, for testing and timing the
 * code paths ONNX Runtime takes on such CPUs (x86 without VNNI) on a machine that has them.
 *
 * Loaded with LD_PRELOAD, it asks Linux to make the CPUID instruction fault in this process
 * (arch_prctl ARCH_SET_CPUID, where the CPU and the hypervisor support CPUID faulting), and
 * answers each faulting CPUID itself: the real answer, less the features CPUID_MASK names.
 * Libraries loaded later (ONNX Runtime's dispatch, numpy's) see the reduced CPU; the program
 * runs natively. Threads and forked children inherit the faulting; exec resets it, and the
 * preload, inherited through the environment, sets it again. Exits with status 97 when the
 * kernel refuses CPUID faulting.
 *
 *   CPUID_MASK=avx2    AVX2 without AVX-512 or VNNI (AMD Zen 1-3, Intel before Ice Lake)
 *   CPUID_MASK=novnni  the same CPU less AVX512_VNNI and AVX_VNNI only
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static uint32_t leaf7_ebx, leaf7_ecx, leaf7_edx, leaf7_1_eax;

static void real_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t out[4]) {
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
    __cpuid_count(leaf, subleaf, out[0], out[1], out[2], out[3]);
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
}

static void on_fault(int sig, siginfo_t *info, void *raw) {
    (void)info;
    ucontext_t *context = raw;
    greg_t *regs = context->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)regs[REG_RIP];
    if (ip[0] != 0x0f || ip[1] != 0xa2) { /* not CPUID: a real fault */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    uint32_t leaf = (uint32_t)regs[REG_RAX], subleaf = (uint32_t)regs[REG_RCX], out[4];
    real_cpuid(leaf, subleaf, out);
    if (leaf == 7 && subleaf == 0) {
        out[1] &= ~leaf7_ebx;
        out[2] &= ~leaf7_ecx;
        out[3] &= ~leaf7_edx;
    } else if (leaf == 7 && subleaf == 1) {
        out[0] &= ~leaf7_1_eax;
    }
    regs[REG_RAX] = out[0];
    regs[REG_RBX] = out[1];
    regs[REG_RCX] = out[2];
    regs[REG_RDX] = out[3];
    regs[REG_RIP] += 2;
}

__attribute__((constructor)) static void mask_cpuid(void) {
    const char *mask = getenv("CPUID_MASK");
    if (mask == NULL || *mask == '\0')
        return;
    /* AVX512_VNNI (leaf 7 ECX bit 11) and AVX_VNNI (leaf 7.1 EAX bit 4) */
    leaf7_ecx |= 1u << 11;
    leaf7_1_eax |= 1u << 4;
    if (strcmp(mask, "avx2") == 0) {
        /* AVX512F, DQ, IFMA, PF, ER, CD, BW, VL; VBMI, VBMI2, BITALG, VPOPCNTDQ; 4VNNIW,
         * 4FMAPS, VP2INTERSECT, FP16; BF16 */
        leaf7_ebx |= (1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) |
                     (1u << 28) | (1u << 30) | (1u << 31);
        leaf7_ecx |= (1u << 1) | (1u << 6) | (1u << 12) | (1u << 14);
        leaf7_edx |= (1u << 2) | (1u << 3) | (1u << 8) | (1u << 23);
        leaf7_1_eax |= 1u << 5;
    } else if (strcmp(mask, "novnni") != 0) {
        _exit(98);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &action, NULL);
    if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0)
        _exit(97);
}
