# rust target-cpu=native — hullsweep_profiling::kernels::wma_interchange
# innermost loop 1: 15 instructions, 4 multiplies, 3.75 instructions/element, bounds-check branch in loop: no
    vmulpd -0x60(%r8,%rsi,8),%ymm1,%ymm2
    vmulpd -0x40(%r8,%rsi,8),%ymm1,%ymm3
    vmulpd -0x20(%r8,%rsi,8),%ymm1,%ymm4
    vmulpd (%r8,%rsi,8),%ymm1,%ymm5
    vaddpd -0x60(%r9,%rsi,8),%ymm2,%ymm2
    vaddpd -0x40(%r9,%rsi,8),%ymm3,%ymm3
    vaddpd -0x20(%r9,%rsi,8),%ymm4,%ymm4
    vaddpd (%r9,%rsi,8),%ymm5,%ymm5
    vmovupd %ymm2,-0x60(%r9,%rsi,8)
    vmovupd %ymm3,-0x40(%r9,%rsi,8)
    vmovupd %ymm4,-0x20(%r9,%rsi,8)
    vmovupd %ymm5,(%r9,%rsi,8)
    add    $0x10,%rsi
    cmp    %rsi,%rcx
    jne    9f860
# innermost loop 2: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    vmulpd 0x0(%rbp,%rsi,8),%ymm1,%ymm2
    vaddpd (%r14,%rsi,8),%ymm2,%ymm2
    vmovupd %ymm2,(%r14,%rsi,8)
    add    $0x4,%rsi
    cmp    %rsi,%rdx
    jne    9f8e0
# innermost loop 3: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    vmulsd 0x0(%rbp,%r10,8),%xmm0,%xmm1
    vaddsd (%r14,%r10,8),%xmm1,%xmm1
    vmovsd %xmm1,(%r14,%r10,8)
    inc    %r10
    cmp    %r10,%r12
    jne    9f910
