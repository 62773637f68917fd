# rust x86-64 baseline — hullsweep_variants::unchecked::sweep
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd (%rax,%rdx,1),%xmm0
    movupd 0x10(%rax,%rdx,1),%xmm1
    addpd  %xmm0,%xmm0
    addpd  %xmm1,%xmm1
    movupd (%rcx,%rdx,1),%xmm2
    subpd  %xmm2,%xmm0
    movupd 0x10(%rcx,%rdx,1),%xmm2
    subpd  %xmm2,%xmm1
    movupd %xmm0,(%rbx,%rdx,1)
    movupd %xmm1,0x10(%rbx,%rdx,1)
    add    $0x20,%rdx
    cmp    %rdx,%rsi
    jne    8fa40
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movsd  (%rax,%rdx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%rcx,%rdx,8),%xmm0
    movsd  %xmm0,(%rbx,%rdx,8)
    inc    %rdx
    cmp    %rdx,%r14
    jne    8fa90
