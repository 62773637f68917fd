# rust x86-64 baseline — hullsweep_variants::unchecked::sweep
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movsd  -0x8(%rax,%rdx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  -0x8(%r8,%rdx,8),%xmm0
    movsd  %xmm0,-0x8(%r15,%rdx,8)
    movsd  (%rax,%rdx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%r8,%rdx,8),%xmm0
    movsd  %xmm0,(%r15,%rdx,8)
    lea    (%rdi,%rdx,1),%rsi
    add    $0x2,%rsi
    add    $0x2,%rdx
    cmp    $0x1,%rsi
    jne    b8d10
# innermost loop 2: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd (%rax,%rdx,8),%xmm0
    movupd 0x10(%rax,%rdx,8),%xmm1
    addpd  %xmm0,%xmm0
    addpd  %xmm1,%xmm1
    movupd (%r8,%rdx,8),%xmm2
    subpd  %xmm2,%xmm0
    movupd 0x10(%r8,%rdx,8),%xmm2
    subpd  %xmm2,%xmm1
    movupd %xmm0,(%r15,%rdx,8)
    movupd %xmm1,0x10(%r15,%rdx,8)
    add    $0x4,%rdx
    cmp    %rdx,%rsi
    jne    b8d90
