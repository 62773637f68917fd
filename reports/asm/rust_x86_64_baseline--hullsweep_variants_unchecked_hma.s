# rust x86-64 baseline — hullsweep_variants::unchecked::hma
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd (%rax,%rdi,1),%xmm0
    movupd 0x10(%rax,%rdi,1),%xmm1
    addpd  %xmm0,%xmm0
    addpd  %xmm1,%xmm1
    movupd (%rcx,%rdi,1),%xmm2
    subpd  %xmm2,%xmm0
    movupd 0x10(%rcx,%rdi,1),%xmm2
    subpd  %xmm2,%xmm1
    movupd %xmm0,0x0(%r13,%rdi,1)
    movupd %xmm1,0x10(%r13,%rdi,1)
    add    $0x20,%rdi
    cmp    %rdi,%rsi
    jne    e22c0
# innermost loop 2: 8 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    cmp    %rdx,%rbx
    je     e2322
    movsd  (%rax,%rdx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%rcx,%rdx,8),%xmm0
    movsd  %xmm0,0x0(%r13,%rdx,8)
    inc    %rdx
    jmp    e2400
