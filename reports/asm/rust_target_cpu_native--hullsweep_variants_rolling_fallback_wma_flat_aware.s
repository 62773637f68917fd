# rust target-cpu=native — hullsweep_variants::rolling::fallback::wma_flat_aware
# innermost loop 1: 26 instructions, 8 multiplies, 3.25 instructions/element, bounds-check branch in loop: no
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    add    $0xfffffffffffffff8,%rax
    jne    bd2f0
# innermost loop 2: 5 instructions, 1 multiplies, 5.00 instructions/element, bounds-check branch in loop: no
    vmulsd %xmm1,%xmm4,%xmm2
    vaddsd %xmm2,%xmm0,%xmm0
    vaddsd %xmm3,%xmm1,%xmm1
    dec    %rax
    jne    bd360
