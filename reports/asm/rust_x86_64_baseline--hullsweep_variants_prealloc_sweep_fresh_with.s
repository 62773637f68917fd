# rust x86-64 baseline — hullsweep_variants::prealloc::sweep_fresh_with
# innermost loop 1: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movsd  (%r14,%rcx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%r12,%rcx,8),%xmm0
    movsd  %xmm0,(%r14,%rcx,8)
    inc    %rcx
    cmp    %rcx,%r15
    jne    b6b90
# innermost loop 2: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd -0x10(%rdx,%rsi,8),%xmm0
    movupd (%rdx,%rsi,8),%xmm1
    movupd -0x10(%rax,%rsi,8),%xmm2
    movupd (%rax,%rsi,8),%xmm3
    addpd  %xmm2,%xmm2
    subpd  %xmm0,%xmm2
    addpd  %xmm3,%xmm3
    subpd  %xmm1,%xmm3
    movupd %xmm2,-0x10(%rax,%rsi,8)
    movupd %xmm3,(%rax,%rsi,8)
    add    $0x4,%rsi
    cmp    %rsi,%rcx
    jne    b6da0
