# rust target-cpu=native — hullsweep_profiling::kernels::wma_weight_table
# innermost loop 1: 11 instructions, 1 multiplies, 11.00 instructions/element, bounds-check branch in loop: YES
    lea    (%rsi,%r9,1),%rdi
    cmp    %rbx,%rdi
    jae    9fe55
    cmp    %r9,%rcx
    je     9fe5e
    vmovsd 0x0(%r13,%r9,8),%xmm2
    vmulsd (%r14,%r9,8),%xmm2,%xmm2
    inc    %r9
    vaddsd %xmm2,%xmm1,%xmm1
    cmp    %r9,%r12
    jne    9fdc0
