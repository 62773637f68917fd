# rust target-cpu=native — hullsweep_profiling::kernels::wma_interchange
# innermost loop 1: 15 instructions, 4 multiplies, 3.75 instructions/element, bounds-check branch in loop: no
    vmulpd -0xc0(%r9,%rsi,8),%zmm1,%zmm2
    vmulpd -0x80(%r9,%rsi,8),%zmm1,%zmm3
    vmulpd -0x40(%r9,%rsi,8),%zmm1,%zmm4
    vmulpd (%r9,%rsi,8),%zmm1,%zmm5
    vaddpd -0xc0(%r10,%rsi,8),%zmm2,%zmm2
    vaddpd -0x80(%r10,%rsi,8),%zmm3,%zmm3
    vaddpd -0x40(%r10,%rsi,8),%zmm4,%zmm4
    vaddpd (%r10,%rsi,8),%zmm5,%zmm5
    vmovupd %zmm2,-0xc0(%r10,%rsi,8)
    vmovupd %zmm3,-0x80(%r10,%rsi,8)
    vmovupd %zmm4,-0x40(%r10,%rsi,8)
    vmovupd %zmm5,(%r10,%rsi,8)
    add    $0x20,%rsi
    cmp    %rsi,%rdx
    jne    8f430
# innermost loop 2: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    vmulpd (%r14,%rsi,8),%ymm1,%ymm2
    vaddpd (%r15,%rsi,8),%ymm2,%ymm2
    vmovupd %ymm2,(%r15,%rsi,8)
    add    $0x4,%rsi
    cmp    %rsi,%r8
    jne    8f4b0
# innermost loop 3: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    vmulsd (%r14,%r11,8),%xmm0,%xmm1
    vaddsd (%r15,%r11,8),%xmm1,%xmm1
    vmovsd %xmm1,(%r15,%r11,8)
    inc    %r11
    cmp    %r11,%rcx
    jne    8f4e0
