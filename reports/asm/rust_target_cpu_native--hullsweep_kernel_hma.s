# rust target-cpu=native — hullsweep_kernel::hma
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rdx,%r8,8),%ymm0
    vmovupd 0x20(%rdx,%r8,8),%ymm1
    vmovupd 0x40(%rdx,%r8,8),%ymm2
    vmovupd 0x60(%rdx,%r8,8),%ymm3
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vaddpd %ymm2,%ymm2,%ymm2
    vaddpd %ymm3,%ymm3,%ymm3
    vsubpd (%rsi,%r8,8),%ymm0,%ymm0
    vsubpd 0x20(%rsi,%r8,8),%ymm1,%ymm1
    vsubpd 0x40(%rsi,%r8,8),%ymm2,%ymm2
    vsubpd 0x60(%rsi,%r8,8),%ymm3,%ymm3
    vmovupd %ymm0,(%r12,%r8,8)
    vmovupd %ymm1,0x20(%r12,%r8,8)
    vmovupd %ymm2,0x40(%r12,%r8,8)
    vmovupd %ymm3,0x60(%r12,%r8,8)
    add    $0x10,%r8
    cmp    %r8,%rcx
    jne    d46c0
# innermost loop 2: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: YES
    cmp    %rcx,%r11
    je     d4812
    cmp    %rcx,%r10
    je     d4808
    vmovsd (%r9,%rcx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%rsi,%rcx,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r8,%rcx,8)
    inc    %rcx
    cmp    %rcx,%rbp
    jne    d4760
