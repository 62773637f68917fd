# rust x86-64 baseline — hullsweep_variants::prealloc::run_combo_from
# innermost loop 1: 13 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movupd -0x10(%rsi,%rdi,8),%xmm0
    movupd (%rsi,%rdi,8),%xmm1
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
    jne    bbaf0
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movsd  (%r12,%rdx,8),%xmm0
    addsd  %xmm0,%xmm0
    subsd  (%rbx,%rdx,8),%xmm0
    movsd  %xmm0,(%r12,%rdx,8)
    inc    %rdx
    cmp    %rdx,%rbp
    jne    bbb40
