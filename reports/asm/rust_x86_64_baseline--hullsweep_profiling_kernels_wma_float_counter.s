# rust x86-64 baseline — hullsweep_profiling::kernels::wma_float_counter
# innermost loop 1: 9 instructions, 1 multiplies, 9.00 instructions/element, bounds-check branch in loop: YES
    cmp    %rsi,%rax
    jae    9da57
    movsd  (%rdi,%rax,8),%xmm4
    mulsd  %xmm3,%xmm4
    addsd  %xmm4,%xmm2
    addsd  %xmm1,%xmm3
    inc    %rax
    dec    %r11
    jne    9da10
