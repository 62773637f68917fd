# rust target-cpu=native — hullsweep_variants::prealloc::wma_range_into
# innermost loop 1: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    vmulsd (%rbx),%xmm3,%xmm4
    add    $0x8,%rbx
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    inc    %r14
    jne    c5570
# innermost loop 2: 27 instructions, 8 multiplies, 3.38 instructions/element, bounds-check branch in loop: no
    vmulsd (%rbx),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    vmulsd 0x8(%rbx),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    vmulsd 0x10(%rbx),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    vmulsd 0x18(%rbx),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    vmulsd 0x20(%rbx),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    vmulsd 0x28(%rbx),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    vmulsd 0x30(%rbx),%xmm3,%xmm4
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    vmulsd 0x38(%rbx),%xmm3,%xmm4
    add    $0x40,%rbx
    vaddsd %xmm4,%xmm2,%xmm2
    vaddsd %xmm1,%xmm3,%xmm3
    cmp    %r11,%rbx
    jne    c5590
