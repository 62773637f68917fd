# rust x86-64 baseline — hullsweep_kernel::reference::wma
# innermost loop 1: 12 instructions, 1 multiplies, 12.00 instructions/element, bounds-check branch in loop: YES
    lea    (%r8,%r11,1),%rbx
    cmp    $0x1,%rbx
    je     f2d9e
    xorps  %xmm2,%xmm2
    cvtsi2sd %r11,%xmm2
    mulsd  -0x8(%rbp,%r11,8),%xmm2
    addsd  %xmm2,%xmm1
    lea    (%r11,%r13,1),%rbx
    inc    %rbx
    inc    %r11
    cmp    $0x1,%rbx
    jne    f2d10
