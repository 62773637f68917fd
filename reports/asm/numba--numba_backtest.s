# numba — numba backtest
# innermost loop 1: 12 instructions, 0 multiplies, NaN instructions/element, bounds-check branch in loop: no
    movq %r14, %rbx
    incq %r11
    vmovapd %xmm7, %xmm8
    movq %rbx, %r14
    cmpq %r11, %rcx
    je .LBB0_20
    vmovsd (%r9,%r11,8), %xmm7
    vsubsd (%r8,%r11,8), %xmm7, %xmm7
    vucomisd %xmm7, %xmm7
    jp .LBB0_17
    vucomisd %xmm8, %xmm8
    jp .LBB0_2
# innermost loop 2: 39 instructions, 2 multiplies, 19.50 instructions/element, bounds-check branch in loop: no
    incq %r11
    vmovapd %xmm7, %xmm8
    movq %rbx, %r14
    cmpq %r11, %rcx
    je .LBB0_20
    vmovsd (%r9,%r11,8), %xmm7
    vsubsd (%r8,%r11,8), %xmm7, %xmm7
    vucomisd %xmm7, %xmm7
    jp .LBB0_17
    vucomisd %xmm8, %xmm8
    jp .LBB0_2
    vucomisd %xmm8, %xmm1
    jb .LBB0_8
    movl $1, %ebx
    vucomisd %xmm1, %xmm7
    ja .LBB0_10
    vucomisd %xmm1, %xmm8
    jb .LBB0_2
    movq $-1, %rbx
    vucomisd %xmm7, %xmm1
    jbe .LBB0_2
    cmpq %r14, %rbx
    je .LBB0_2
    testq %r14, %r14
    je .LBB0_14
    vucomisd %xmm1, %xmm6
    jne .LBB0_13
    jnp .LBB0_21
    vmovsd (%r10,%r11,8), %xmm8
    vdivsd %xmm6, %xmm8, %xmm6
    vaddsd %xmm4, %xmm6, %xmm6
    vcvtsi2sd %r14, %xmm15, %xmm9
    vmulsd %xmm6, %xmm9, %xmm6
    vmulsd %xmm5, %xmm6, %xmm6
    vsubsd %xmm0, %xmm6, %xmm6
    vaddsd %xmm6, %xmm2, %xmm2
    incq %rdx
    vmovapd %xmm8, %xmm6
    jmp .LBB0_3
