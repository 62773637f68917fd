# rust x86-64 baseline — hullsweep_variants::checked::run_combo
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd (%r14,%rdx,1),%xmm0
    movupd 0x10(%r14,%rdx,1),%xmm1
    movupd (%r15,%rdx,1),%xmm2
    movupd 0x10(%r15,%rdx,1),%xmm3
    addpd  %xmm0,%xmm0
    subpd  %xmm2,%xmm0
    addpd  %xmm1,%xmm1
    subpd  %xmm3,%xmm1
    movupd %xmm0,0x0(%rbp,%rdx,1)
    movupd %xmm1,0x10(%rbp,%rdx,1)
    add    $0x20,%rdx
    cmp    %rdx,%rcx
    jne    be1f0
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movsd  (%r14,%rax,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%r15,%rax,8),%xmm0
    movsd  %xmm0,0x0(%rbp,%rax,8)
    inc    %rax
    cmp    %rax,%rbx
    jne    be240
