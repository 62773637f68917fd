# rust x86-64 baseline — hullsweep_variants::unchecked::wma
# innermost loop 1: 24 instructions, 4 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    lea    -0x1(%r9),%r10
    xorps  %xmm2,%xmm2
    cvtsi2sd %r10,%xmm2
    mulsd  -0x10(%r8,%r9,8),%xmm2
    addsd  %xmm1,%xmm2
    xorps  %xmm1,%xmm1
    cvtsi2sd %r9,%xmm1
    mulsd  -0x8(%r8,%r9,8),%xmm1
    addsd  %xmm2,%xmm1
    lea    0x1(%r9),%r10
    xorps  %xmm2,%xmm2
    cvtsi2sd %r10,%xmm2
    mulsd  (%r8,%r9,8),%xmm2
    addsd  %xmm1,%xmm2
    lea    0x2(%r9),%r10
    xorps  %xmm1,%xmm1
    cvtsi2sd %r10,%xmm1
    mulsd  0x8(%r8,%r9,8),%xmm1
    addsd  %xmm2,%xmm1
    lea    (%rsi,%r9,1),%r10
    add    $0x4,%r10
    add    $0x4,%r9
    cmp    $0x2,%r10
    jne    e2590
# innermost loop 2: 8 instructions, 1 multiplies, 8.00 instructions/element, bounds-check branch in loop: no
    xorps  %xmm2,%xmm2
    cvtsi2sd %r9,%xmm2
    mulsd  (%r12,%r10,8),%xmm2
    addsd  %xmm2,%xmm1
    inc    %r10
    inc    %r9
    dec    %r11
    jne    e2610
