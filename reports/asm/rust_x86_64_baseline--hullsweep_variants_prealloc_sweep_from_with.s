# rust x86-64 baseline — hullsweep_variants::prealloc::sweep_from_with
# innermost loop 1: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movsd  (%r15,%rdx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%rax,%rdx,8),%xmm0
    movsd  %xmm0,(%r15,%rdx,8)
    inc    %rdx
    cmp    %rdx,%r12
    jne    bd0a0
# innermost loop 2: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd -0x10(%r8,%rdi,8),%xmm0
    movupd (%r8,%rdi,8),%xmm1
    movupd -0x10(%rax,%rdi,8),%xmm2
    movupd (%rax,%rdi,8),%xmm3
    addpd  %xmm2,%xmm2
    subpd  %xmm0,%xmm2
    addpd  %xmm3,%xmm3
    subpd  %xmm1,%xmm3
    movupd %xmm2,-0x10(%rax,%rdi,8)
    movupd %xmm3,(%rax,%rdi,8)
    add    $0x4,%rdi
    cmp    %rdi,%rdx
    jne    bd2c0
