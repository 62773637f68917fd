# rust target-cpu=native — hullsweep_variants::unchecked::sweep
# innermost loop 1: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd (%rax,%rdx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%r8,%rdx,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r15,%rdx,8)
    inc    %rdx
    dec    %rdi
    jne    996d0
# innermost loop 2: 20 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd -0x18(%rax,%rdx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd -0x18(%r8,%rdx,8),%xmm0,%xmm0
    vmovsd %xmm0,-0x18(%r15,%rdx,8)
    vmovsd -0x10(%rax,%rdx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd -0x10(%r8,%rdx,8),%xmm0,%xmm0
    vmovsd %xmm0,-0x10(%r15,%rdx,8)
    vmovsd -0x8(%rax,%rdx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd -0x8(%r8,%rdx,8),%xmm0,%xmm0
    vmovsd %xmm0,-0x8(%r15,%rdx,8)
    vmovsd (%rax,%rdx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%r8,%rdx,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r15,%rdx,8)
    lea    0x4(%rdi,%rdx,1),%rsi
    add    $0x4,%rdx
    cmp    $0x3,%rsi
    jne    99710
# innermost loop 3: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rax,%rdx,8),%ymm0
    vmovupd 0x20(%rax,%rdx,8),%ymm1
    vmovupd 0x40(%rax,%rdx,8),%ymm2
    vmovupd 0x60(%rax,%rdx,8),%ymm3
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vaddpd %ymm2,%ymm2,%ymm2
    vaddpd %ymm3,%ymm3,%ymm3
    vsubpd (%r8,%rdx,8),%ymm0,%ymm0
    vsubpd 0x20(%r8,%rdx,8),%ymm1,%ymm1
    vsubpd 0x40(%r8,%rdx,8),%ymm2,%ymm2
    vsubpd 0x60(%r8,%rdx,8),%ymm3,%ymm3
    vmovupd %ymm0,(%r15,%rdx,8)
    vmovupd %ymm1,0x20(%r15,%rdx,8)
    vmovupd %ymm2,0x40(%r15,%rdx,8)
    vmovupd %ymm3,0x60(%r15,%rdx,8)
    add    $0x10,%rdx
    cmp    %rdx,%rsi
    jne    99ab0
# innermost loop 4: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rax,%rdx,8),%ymm0
    vaddpd %ymm0,%ymm0,%ymm0
    vsubpd (%r8,%rdx,8),%ymm0,%ymm0
    vmovupd %ymm0,(%r15,%rdx,8)
    add    $0x4,%rdx
    cmp    %rdx,%rsi
    jne    99b40
