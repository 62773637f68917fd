# rust x86-64 baseline — hullsweep_variants::rolling::fallback::wma_flat_aware
# innermost loop 1: 18 instructions, 4 multiplies, 4.50 instructions/element, bounds-check branch in loop: no
    movapd %xmm4,%xmm1
    mulsd  %xmm0,%xmm1
    addsd  %xmm2,%xmm1
    addsd  %xmm3,%xmm0
    movapd %xmm4,%xmm2
    mulsd  %xmm0,%xmm2
    addsd  %xmm1,%xmm2
    addsd  %xmm3,%xmm0
    movapd %xmm4,%xmm1
    mulsd  %xmm0,%xmm1
    addsd  %xmm2,%xmm1
    addsd  %xmm3,%xmm0
    movapd %xmm4,%xmm2
    mulsd  %xmm0,%xmm2
    addsd  %xmm1,%xmm2
    addsd  %xmm3,%xmm0
    add    $0xfffffffffffffffc,%rax
    jne    b8b50
# innermost loop 2: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    movapd %xmm4,%xmm1
    mulsd  %xmm0,%xmm1
    addsd  %xmm1,%xmm2
    addsd  %xmm3,%xmm0
    dec    %rax
    jne    b8ba0
