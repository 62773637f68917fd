# rust x86-64 baseline — hullsweep_kernel::hma
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd (%rdx,%r8,8),%xmm0
    movupd 0x10(%rdx,%r8,8),%xmm1
    addpd  %xmm0,%xmm0
    addpd  %xmm1,%xmm1
    movupd (%rsi,%r8,8),%xmm2
    subpd  %xmm2,%xmm0
    movupd 0x10(%rsi,%r8,8),%xmm2
    subpd  %xmm2,%xmm1
    movupd %xmm0,(%r12,%r8,8)
    movupd %xmm1,0x10(%r12,%r8,8)
    add    $0x4,%r8
    cmp    %r8,%rcx
    jne    d56b0
# innermost loop 2: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: YES
    cmp    %rcx,%r11
    je     d57cf
    cmp    %rcx,%r10
    je     d57c5
    movsd  (%r9,%rcx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%rsi,%rcx,8),%xmm0
    movsd  %xmm0,(%r8,%rcx,8)
    inc    %rcx
    cmp    %rcx,%rbp
    jne    d5720
