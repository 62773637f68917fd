# rust x86-64 baseline — hullsweep_profiling::kernels::wma_subslice
# innermost loop 1: 27 instructions, 4 multiplies, 6.75 instructions/element, bounds-check branch in loop: no
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
    mov    %r11,%r14
    mulsd  0x8(%r10,%rbx,8),%xmm1
    addsd  %xmm2,%xmm1
    lea    (%rax,%rbx,1),%r15
    add    $0x4,%r15
    lea    (%r10,%rbx,8),%r11
    add    $0x10,%r11
    add    $0x4,%rbx
    cmp    $0x2,%r15
    jne    9d140
# innermost loop 2: 8 instructions, 1 multiplies, 8.00 instructions/element, bounds-check branch in loop: no
    lea    (%rbx,%r14,1),%r15
    xorps  %xmm2,%xmm2
    cvtsi2sd %r15,%xmm2
    mulsd  (%r11,%r14,8),%xmm2
    addsd  %xmm2,%xmm1
    inc    %r14
    cmp    %r14,%r8
    jne    9d1d0
