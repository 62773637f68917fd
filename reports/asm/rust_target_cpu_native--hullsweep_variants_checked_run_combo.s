# rust target-cpu=native — hullsweep_variants::checked::run_combo
# innermost loop 1: 11 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%r14,%rdx,1),%ymm0
    vmovupd 0x20(%r14,%rdx,1),%ymm1
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vsubpd (%r15,%rdx,1),%ymm0,%ymm0
    vsubpd 0x20(%r15,%rdx,1),%ymm1,%ymm1
    vmovupd %ymm0,(%r12,%rdx,1)
    vmovupd %ymm1,0x20(%r12,%rdx,1)
    add    $0x40,%rdx
    cmp    %rdx,%rcx
    jne    b94d0
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd (%r14,%rax,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%r15,%rax,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r12,%rax,8)
    inc    %rax
    cmp    %rax,%r13
    jne    b9520
