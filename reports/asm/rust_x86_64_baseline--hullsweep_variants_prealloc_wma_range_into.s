# rust x86-64 baseline — hullsweep_variants::prealloc::wma_range_into
# innermost loop 1: 7 instructions, 1 multiplies, 7.00 instructions/element, bounds-check branch in loop: no
    movsd  (%rbx),%xmm4
    mulsd  %xmm2,%xmm4
    add    $0x8,%rbx
    addsd  %xmm4,%xmm3
    addsd  %xmm1,%xmm2
    inc    %r14
    jne    bca30
# innermost loop 2: 19 instructions, 4 multiplies, 4.75 instructions/element, bounds-check branch in loop: no
    movsd  (%rbx),%xmm4
    mulsd  %xmm2,%xmm4
    addsd  %xmm3,%xmm4
    addsd  %xmm1,%xmm2
    movsd  0x8(%rbx),%xmm3
    mulsd  %xmm2,%xmm3
    addsd  %xmm4,%xmm3
    addsd  %xmm1,%xmm2
    movsd  0x10(%rbx),%xmm4
    mulsd  %xmm2,%xmm4
    addsd  %xmm3,%xmm4
    addsd  %xmm1,%xmm2
    movsd  0x18(%rbx),%xmm3
    mulsd  %xmm2,%xmm3
    add    $0x20,%rbx
    addsd  %xmm4,%xmm3
    addsd  %xmm1,%xmm2
    cmp    %r11,%rbx
    jne    bca60
