# numba — numba wma
# innermost loop 1: 35 instructions, 8 multiplies, 4.38 instructions/element, bounds-check branch in loop: no
    leaq -4(%r11), %r12
    leaq -7(%r11), %rbp
    vcvtsi2sd %rbp, %xmm15, %xmm2
    vmulsd -64(%r8,%r11,8), %xmm2, %xmm2
    vaddsd %xmm2, %xmm1, %xmm1
    leaq -6(%r11), %rbp
    vcvtsi2sd %rbp, %xmm15, %xmm2
    vmulsd -56(%r8,%r11,8), %xmm2, %xmm2
    vaddsd %xmm2, %xmm1, %xmm1
    leaq -5(%r11), %rbp
    vcvtsi2sd %rbp, %xmm15, %xmm2
    vmulsd -48(%r8,%r11,8), %xmm2, %xmm2
    vcvtsi2sd %r12, %xmm15, %xmm3
    vaddsd %xmm2, %xmm1, %xmm1
    vmulsd -40(%r8,%r11,8), %xmm3, %xmm2
    leaq -3(%r11), %r12
    vcvtsi2sd %r12, %xmm15, %xmm3
    vaddsd %xmm2, %xmm1, %xmm1
    vmulsd -32(%r8,%r11,8), %xmm3, %xmm2
    leaq -2(%r11), %r12
    vcvtsi2sd %r12, %xmm15, %xmm3
    vaddsd %xmm2, %xmm1, %xmm1
    vmulsd -24(%r8,%r11,8), %xmm3, %xmm2
    leaq -1(%r11), %r12
    vcvtsi2sd %r12, %xmm15, %xmm3
    vaddsd %xmm2, %xmm1, %xmm1
    vmulsd -16(%r8,%r11,8), %xmm3, %xmm2
    vaddsd %xmm2, %xmm1, %xmm1
    vcvtsi2sd %r11, %xmm15, %xmm2
    vmulsd -8(%r8,%r11,8), %xmm2, %xmm2
    vaddsd %xmm2, %xmm1, %xmm1
    leaq 8(%r10,%r11), %r12
    addq $8, %r11
    cmpq $8, %r12
    jne .LBB0_32
# innermost loop 2: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    vcvtsi2sd %r11, %xmm15, %xmm2
    vmulsd -8(%r8,%r11,8), %xmm2, %xmm2
    vaddsd %xmm2, %xmm1, %xmm1
    incq %r11
    decq %r12
    jne .LBB0_36
