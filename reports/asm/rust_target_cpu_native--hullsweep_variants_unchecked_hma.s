# rust target-cpu=native — hullsweep_variants::unchecked::hma
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rax,%r8,1),%ymm0
    vmovupd 0x20(%rax,%r8,1),%ymm1
    vmovupd 0x40(%rax,%r8,1),%ymm2
    vmovupd 0x60(%rax,%r8,1),%ymm3
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vaddpd %ymm2,%ymm2,%ymm2
    vaddpd %ymm3,%ymm3,%ymm3
    vsubpd (%rcx,%r8,1),%ymm0,%ymm0
    vsubpd 0x20(%rcx,%r8,1),%ymm1,%ymm1
    vsubpd 0x40(%rcx,%r8,1),%ymm2,%ymm2
    vsubpd 0x60(%rcx,%r8,1),%ymm3,%ymm3
    vmovupd %ymm0,0x0(%r13,%r8,1)
    vmovupd %ymm1,0x20(%r13,%r8,1)
    vmovupd %ymm2,0x40(%r13,%r8,1)
    vmovupd %ymm3,0x60(%r13,%r8,1)
    sub    $0xffffffffffffff80,%r8
    cmp    %r8,%rdi
    jne    e1d80
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rax,%rdi,8),%ymm0
    vaddpd %ymm0,%ymm0,%ymm0
    vsubpd (%rcx,%rdi,8),%ymm0,%ymm0
    vmovupd %ymm0,0x0(%r13,%rdi,8)
    add    $0x4,%rdi
    cmp    %rdi,%rdx
    jne    e1e10
# innermost loop 3: 8 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    cmp    %rdx,%rbx
    je     e1e53
    vmovsd (%rax,%rdx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%rcx,%rdx,8),%xmm0,%xmm0
    vmovsd %xmm0,0x0(%r13,%rdx,8)
    inc    %rdx
    jmp    e1f34
