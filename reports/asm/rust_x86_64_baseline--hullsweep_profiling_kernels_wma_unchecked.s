# rust x86-64 baseline — hullsweep_profiling::kernels::wma_unchecked
# innermost loop 1: 24 instructions, 4 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    lea    -0x1(%rbx),%r14
    xorps  %xmm2,%xmm2
    cvtsi2sd %r14,%xmm2
    mulsd  -0x10(%r10,%rbx,8),%xmm2
    addsd  %xmm1,%xmm2
    xorps  %xmm1,%xmm1
    cvtsi2sd %rbx,%xmm1
    mulsd  -0x8(%r10,%rbx,8),%xmm1
    addsd  %xmm2,%xmm1
    lea    0x1(%rbx),%r14
    xorps  %xmm2,%xmm2
    cvtsi2sd %r14,%xmm2
    mulsd  (%r10,%rbx,8),%xmm2
    addsd  %xmm1,%xmm2
    lea    0x2(%rbx),%r14
    xorps  %xmm1,%xmm1
    cvtsi2sd %r14,%xmm1
    mulsd  0x8(%r10,%rbx,8),%xmm1
    addsd  %xmm2,%xmm1
    lea    (%rdx,%rbx,1),%r14
    add    $0x4,%r14
    add    $0x4,%rbx
    cmp    $0x2,%r14
    jne    9d370
# innermost loop 2: 8 instructions, 1 multiplies, 8.00 instructions/element, bounds-check branch in loop: no
    xorps  %xmm2,%xmm2
    cvtsi2sd %rbx,%xmm2
    mulsd  (%rdi,%r14,8),%xmm2
    addsd  %xmm2,%xmm1
    inc    %r14
    inc    %rbx
    dec    %r15
    jne    9d3f0
