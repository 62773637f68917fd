# rust x86-64 baseline — hullsweep_kernel::reference::hma
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd (%rcx,%r8,8),%xmm0
    movupd 0x10(%rcx,%r8,8),%xmm1
    addpd  %xmm0,%xmm0
    addpd  %xmm1,%xmm1
    movupd (%rdx,%r8,8),%xmm2
    subpd  %xmm2,%xmm0
    movupd 0x10(%rdx,%r8,8),%xmm2
    subpd  %xmm2,%xmm1
    movupd %xmm0,(%r15,%r8,8)
    movupd %xmm1,0x10(%r15,%r8,8)
    add    $0x4,%r8
    cmp    %r8,%rsi
    jne    f2a20
# innermost loop 2: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: YES
    cmp    %r11,%r10
    je     f2b40
    cmp    %r11,%r9
    je     f2b36
    movsd  (%rcx,%r11,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%rsi,%r11,8),%xmm0
    movsd  %xmm0,(%r8,%r11,8)
    inc    %r11
    cmp    %r11,%rbp
    jne    f2a90
