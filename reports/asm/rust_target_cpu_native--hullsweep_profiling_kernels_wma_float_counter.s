# rust target-cpu=native — hullsweep_profiling::kernels::wma_float_counter
# innermost loop 1: 8 instructions, 1 multiplies, 8.00 instructions/element, bounds-check branch in loop: YES
    cmp    %rsi,%rax
    jae    9ff33
    vmulsd (%rdi,%rax,8),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    inc    %rax
    dec    %r11
    jne    9fef0
