# rust target-cpu=native — hullsweep_variants::prealloc::run_combo_from
# innermost loop 1: 19 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd -0x60(%rdi,%r8,8),%ymm0
    vmovupd -0x40(%rdi,%r8,8),%ymm1
    vmovupd -0x20(%rdi,%r8,8),%ymm2
    vmovupd (%rdi,%r8,8),%ymm3
    vaddpd %ymm0,%ymm0,%ymm0
    vaddpd %ymm1,%ymm1,%ymm1
    vaddpd %ymm2,%ymm2,%ymm2
    vaddpd %ymm3,%ymm3,%ymm3
    vsubpd -0x60(%rsi,%r8,8),%ymm0,%ymm0
    vsubpd -0x40(%rsi,%r8,8),%ymm1,%ymm1
    vsubpd -0x20(%rsi,%r8,8),%ymm2,%ymm2
    vsubpd (%rsi,%r8,8),%ymm3,%ymm3
    vmovupd %ymm0,-0x60(%rdi,%r8,8)
    vmovupd %ymm1,-0x40(%rdi,%r8,8)
    vmovupd %ymm2,-0x20(%rdi,%r8,8)
    vmovupd %ymm3,(%rdi,%r8,8)
    add    $0x10,%r8
    cmp    %r8,%rdx
    jne    c42e0
# innermost loop 2: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovupd (%rdi,%rsi,8),%ymm0
    vaddpd %ymm0,%ymm0,%ymm0
    vsubpd (%rax,%rsi,8),%ymm0,%ymm0
    vmovupd %ymm0,(%rdi,%rsi,8)
    add    $0x4,%rsi
    cmp    %rsi,%rdx
    jne    c4370
# innermost loop 3: 7 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    vmovsd (%r15,%rdx,8),%xmm0
    vaddsd %xmm0,%xmm0,%xmm0
    vsubsd 0x0(%r13,%rdx,8),%xmm0,%xmm0
    vmovsd %xmm0,(%r15,%rdx,8)
    inc    %rdx
    cmp    %rdx,%r14
    jne    c43a0
