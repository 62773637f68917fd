# rust x86-64 baseline — hullsweep_profiling::kernels::wma_weight_table
# innermost loop 1: 11 instructions, 1 multiplies, 11.00 instructions/element, bounds-check branch in loop: YES
    lea    (%rsi,%r9,1),%rdi
    cmp    %rbx,%rdi
    jae    9d975
    cmp    %r9,%rcx
    je     9d97e
    movsd  0x0(%r13,%r9,8),%xmm2
    mulsd  (%r14,%r9,8),%xmm2
    inc    %r9
    addsd  %xmm2,%xmm1
    cmp    %r9,%r12
    jne    9d8e0
