# rust x86-64 baseline — hullsweep_profiling::kernels::wma_signed_weight
# innermost loop 1: 11 instructions, 1 multiplies, 11.00 instructions/element, bounds-check branch in loop: YES
    lea    (%r9,%r11,1),%rax
    cmp    %rsi,%rax
    jae    9db04
    lea    0x1(%r11),%rax
    xorps  %xmm2,%xmm2
    cvtsi2sd %rax,%xmm2
    mulsd  (%rdi,%r11,8),%xmm2
    addsd  %xmm2,%xmm1
    mov    %rax,%r11
    cmp    %rax,%rdx
    jne    9dab0
