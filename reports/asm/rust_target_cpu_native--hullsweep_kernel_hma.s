# rust target-cpu=native — hullsweep_kernel::hma
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rdx,%r8,8),%zmm0
    vmovupd 0x40(%rdx,%r8,8),%zmm1
    vmovupd 0x80(%rdx,%r8,8),%zmm2
    vmovupd 0xc0(%rdx,%r8,8),%zmm3
    vaddpd %zmm0,%zmm0,%zmm0
    vaddpd %zmm1,%zmm1,%zmm1
    vaddpd %zmm2,%zmm2,%zmm2
    vaddpd %zmm3,%zmm3,%zmm3
    vsubpd (%rsi,%r8,8),%zmm0,%zmm0
    vsubpd 0x40(%rsi,%r8,8),%zmm1,%zmm1
    vsubpd 0x80(%rsi,%r8,8),%zmm2,%zmm2
    vsubpd 0xc0(%rsi,%r8,8),%zmm3,%zmm3
    vmovupd %zmm0,(%r12,%r8,8)
    vmovupd %zmm1,0x40(%r12,%r8,8)
    vmovupd %zmm2,0x80(%r12,%r8,8)
    vmovupd %zmm3,0xc0(%r12,%r8,8)
    add    $0x20,%r8
    cmp    %r8,%rcx
    jne    ae020
# innermost loop 2: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: YES
    cmp    %rcx,%r11
    je     ae182
    cmp    %rcx,%r10
    je     ae178
    vmovsd (%r9,%rcx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%rsi,%rcx,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r8,%rcx,8)
    inc    %rcx
    cmp    %rcx,%rbp
    jne    ae0d0
