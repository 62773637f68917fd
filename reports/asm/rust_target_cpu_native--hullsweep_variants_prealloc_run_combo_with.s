# rust target-cpu=native — hullsweep_variants::prealloc::run_combo_with
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd -0x60(%rsi,%rdi,8),%ymm0
    vmovupd -0x40(%rsi,%rdi,8),%ymm1
    vmovupd -0x20(%rsi,%rdi,8),%ymm2
    vmovupd (%rsi,%rdi,8),%ymm3
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vaddpd %ymm2,%ymm2,%ymm2
    vaddpd %ymm3,%ymm3,%ymm3
    vsubpd -0x60(%rdx,%rdi,8),%ymm0,%ymm0
    vsubpd -0x40(%rdx,%rdi,8),%ymm1,%ymm1
    vsubpd -0x20(%rdx,%rdi,8),%ymm2,%ymm2
    vsubpd (%rdx,%rdi,8),%ymm3,%ymm3
    vmovupd %ymm0,-0x60(%rsi,%rdi,8)
    vmovupd %ymm1,-0x40(%rsi,%rdi,8)
    vmovupd %ymm2,-0x20(%rsi,%rdi,8)
    vmovupd %ymm3,(%rsi,%rdi,8)
    add    $0x10,%rdi
    cmp    %rdi,%rcx
    jne    ba830
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rsi,%rdx,8),%ymm0
    vaddpd %ymm0,%ymm0,%ymm0
    vsubpd (%rax,%rdx,8),%ymm0,%ymm0
    vmovupd %ymm0,(%rsi,%rdx,8)
    add    $0x4,%rdx
    cmp    %rdx,%rcx
    jne    ba8b0
# innermost loop 3: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd (%r12,%rcx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd 0x0(%r13,%rcx,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r12,%rcx,8)
    inc    %rcx
    cmp    %rcx,%r15
    jne    ba8e0
