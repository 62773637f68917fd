# rust x86-64 baseline — hullsweep_variants::checked::hma
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd (%r14,%rcx,1),%xmm0
    movupd 0x10(%r14,%rcx,1),%xmm1
    movupd (%rbx,%rcx,1),%xmm2
    movupd 0x10(%rbx,%rcx,1),%xmm3
    addpd  %xmm0,%xmm0
    subpd  %xmm2,%xmm0
    addpd  %xmm1,%xmm1
    subpd  %xmm3,%xmm1
    movupd %xmm0,(%r12,%rcx,1)
    movupd %xmm1,0x10(%r12,%rcx,1)
    add    $0x20,%rcx
    cmp    %rcx,%rax
    jne    b4050
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movsd  (%r14,%r15,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%rbx,%r15,8),%xmm0
    movsd  %xmm0,(%r12,%r15,8)
    inc    %r15
    cmp    %r15,%rbp
    jne    b40da
