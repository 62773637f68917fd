# rust target-cpu=native — hullsweep_variants::checked::run_combo
# innermost loop 1: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%r14,%rdx,1),%zmm0
    vmovupd 0x40(%r14,%rdx,1),%zmm1
    vaddpd %zmm0,%zmm0,%zmm0
    vaddpd %zmm1,%zmm1,%zmm1
    vsubpd (%r15,%rdx,1),%zmm0,%zmm0
    vsubpd 0x40(%r15,%rdx,1),%zmm1,%zmm1
    vmovupd %zmm0,(%r12,%rdx,1)
    vmovupd %zmm1,0x40(%r12,%rdx,1)
    sub    $0xffffffffffffff80,%rdx
    cmp    %rdx,%rcx
    jne    a2390
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%r14,%rcx,8),%ymm0
    vaddpd %ymm0,%ymm0,%ymm0
    vsubpd (%r15,%rcx,8),%ymm0,%ymm0
    vmovupd %ymm0,(%r12,%rcx,8)
    add    $0x4,%rcx
    cmp    %rcx,%rax
    jne    a2400
# innermost loop 3: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd (%r14,%rax,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%r15,%rax,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r12,%rax,8)
    inc    %rax
    cmp    %rax,%r13
    jne    a2430
