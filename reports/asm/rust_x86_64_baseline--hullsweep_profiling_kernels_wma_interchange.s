# rust x86-64 baseline — hullsweep_profiling::kernels::wma_interchange
# innermost loop 1: 13 instructions, 2 multiplies, 6.50 instructions/element, bounds-check branch in loop: no
    movupd -0x10(%rdx,%rsi,8),%xmm2
    movupd (%rdx,%rsi,8),%xmm3
    mulpd  %xmm1,%xmm2
    mulpd  %xmm1,%xmm3
    movupd -0x10(%r10,%rsi,8),%xmm4
    addpd  %xmm2,%xmm4
    movupd (%r10,%rsi,8),%xmm2
    addpd  %xmm3,%xmm2
    movupd %xmm4,-0x10(%r10,%rsi,8)
    movupd %xmm2,(%r10,%rsi,8)
    add    $0x4,%rsi
    cmp    %rsi,%rcx
    jne    9d530
# innermost loop 2: 7 instructions, 1 multiplies, 7.00 instructions/element, bounds-check branch in loop: no
    movsd  0x0(%rbp,%rsi,8),%xmm1
    mulsd  %xmm0,%xmm1
    addsd  (%r14,%rsi,8),%xmm1
    movsd  %xmm1,(%r14,%rsi,8)
    inc    %rsi
    cmp    %rsi,%r15
    jne    9d580
