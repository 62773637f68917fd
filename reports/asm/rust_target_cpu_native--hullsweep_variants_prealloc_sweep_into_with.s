# rust target-cpu=native — hullsweep_variants::prealloc::sweep_into_with
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd -0xc0(%rsi,%rdi,8),%zmm0
    vmovupd -0x80(%rsi,%rdi,8),%zmm1
    vmovupd -0x40(%rsi,%rdi,8),%zmm2
    vmovupd (%rsi,%rdi,8),%zmm3
    vaddpd %zmm0,%zmm0,%zmm0
    vaddpd %zmm1,%zmm1,%zmm1
    vaddpd %zmm2,%zmm2,%zmm2
    vaddpd %zmm3,%zmm3,%zmm3
    vsubpd -0xc0(%rdx,%rdi,8),%zmm0,%zmm0
    vsubpd -0x80(%rdx,%rdi,8),%zmm1,%zmm1
    vsubpd -0x40(%rdx,%rdi,8),%zmm2,%zmm2
    vsubpd (%rdx,%rdi,8),%zmm3,%zmm3
    vmovupd %zmm0,-0xc0(%rsi,%rdi,8)
    vmovupd %zmm1,-0x80(%rsi,%rdi,8)
    vmovupd %zmm2,-0x40(%rsi,%rdi,8)
    vmovupd %zmm3,(%rsi,%rdi,8)
    add    $0x20,%rdi
    cmp    %rdi,%rcx
    jne    9a930
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rsi,%rdx,8),%ymm0
    vaddpd %ymm0,%ymm0,%ymm0
    vsubpd (%rax,%rdx,8),%ymm0,%ymm0
    vmovupd %ymm0,(%rsi,%rdx,8)
    add    $0x4,%rdx
    cmp    %rdx,%rcx
    jne    9a9d0
# innermost loop 3: 8 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    mov    0x10(%rsp),%rax
    vmovsd (%rax,%rcx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%r12,%rcx,8),%xmm0,%xmm0
    vmovsd %xmm0,(%rax,%rcx,8)
    inc    %rcx
    cmp    %rcx,%r14
    jne    9aa00
