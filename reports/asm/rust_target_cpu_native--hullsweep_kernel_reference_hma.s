# rust target-cpu=native — hullsweep_kernel::reference::hma
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rcx,%r8,8),%ymm0
    vmovupd 0x20(%rcx,%r8,8),%ymm1
    vmovupd 0x40(%rcx,%r8,8),%ymm2
    vmovupd 0x60(%rcx,%r8,8),%ymm3
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vaddpd %ymm2,%ymm2,%ymm2
    vaddpd %ymm3,%ymm3,%ymm3
    vsubpd (%rdx,%r8,8),%ymm0,%ymm0
    vsubpd 0x20(%rdx,%r8,8),%ymm1,%ymm1
    vsubpd 0x40(%rdx,%r8,8),%ymm2,%ymm2
    vsubpd 0x60(%rdx,%r8,8),%ymm3,%ymm3
    vmovupd %ymm0,(%r15,%r8,8)
    vmovupd %ymm1,0x20(%r15,%r8,8)
    vmovupd %ymm2,0x40(%r15,%r8,8)
    vmovupd %ymm3,0x60(%r15,%r8,8)
    add    $0x10,%r8
    cmp    %r8,%rsi
    jne    ef9b0
# innermost loop 2: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: YES
    cmp    %r10,%r11
    je     efb03
    cmp    %r10,%r9
    je     efaf9
    vmovsd (%rcx,%r10,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%rsi,%r10,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r8,%r10,8)
    inc    %r10
    cmp    %r10,%rbp
    jne    efa50
