# rust target-cpu=native — hullsweep_variants::checked::hma
# innermost loop 1: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%r14,%rcx,1),%ymm0
    vmovupd 0x20(%r14,%rcx,1),%ymm1
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vsubpd (%rbx,%rcx,1),%ymm0,%ymm0
    vsubpd 0x20(%rbx,%rcx,1),%ymm1,%ymm1
    vmovupd %ymm0,(%r12,%rcx,1)
    vmovupd %ymm1,0x20(%r12,%rcx,1)
    add    $0x40,%rcx
    cmp    %rcx,%rax
    jne    b7560
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd (%r14,%r15,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%rbx,%r15,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r12,%r15,8)
    inc    %r15
    cmp    %r15,%rbp
    jne    b75e2
