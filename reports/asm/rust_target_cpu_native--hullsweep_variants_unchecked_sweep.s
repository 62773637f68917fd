# rust target-cpu=native — hullsweep_variants::unchecked::sweep
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rax,%rdx,1),%zmm0
    vmovupd 0x40(%rax,%rdx,1),%zmm1
    vmovupd 0x80(%rax,%rdx,1),%zmm2
    vmovupd 0xc0(%rax,%rdx,1),%zmm3
    vaddpd %zmm0,%zmm0,%zmm0
    vaddpd %zmm1,%zmm1,%zmm1
    vaddpd %zmm2,%zmm2,%zmm2
    vaddpd %zmm3,%zmm3,%zmm3
    vsubpd (%rcx,%rdx,1),%zmm0,%zmm0
    vsubpd 0x40(%rcx,%rdx,1),%zmm1,%zmm1
    vsubpd 0x80(%rcx,%rdx,1),%zmm2,%zmm2
    vsubpd 0xc0(%rcx,%rdx,1),%zmm3,%zmm3
    vmovupd %zmm0,(%rbx,%rdx,1)
    vmovupd %zmm1,0x40(%rbx,%rdx,1)
    vmovupd %zmm2,0x80(%rbx,%rdx,1)
    vmovupd %zmm3,0xc0(%rbx,%rdx,1)
    add    $0x100,%rdx
    cmp    %rdx,%rsi
    jne    95220
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rax,%rdx,8),%ymm0
    vaddpd %ymm0,%ymm0,%ymm0
    vsubpd (%rcx,%rdx,8),%ymm0,%ymm0
    vmovupd %ymm0,(%rbx,%rdx,8)
    add    $0x4,%rdx
    cmp    %rdx,%rdi
    jne    952c0
# innermost loop 3: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd (%rax,%rsi,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd (%rcx,%rsi,8),%xmm0,%xmm0
    vmovsd %xmm0,(%rbx,%rsi,8)
    inc    %rsi
    cmp    %rsi,%r14
    jne    952f0
