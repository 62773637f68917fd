# rust target-cpu=native — hullsweep_variants::checked::wma
# innermost loop 1: 27 instructions, 8 multiplies, 3.38 instructions/element, bounds-check branch in loop: no
    vmovsd -0x38(%r9,%r11,8),%xmm2
    vmovsd -0x30(%r9,%r11,8),%xmm3
    vmulsd (%rsi,%r11,8),%xmm2,%xmm2
    vaddsd %xmm2,%xmm1,%xmm1
    vmulsd 0x8(%rsi,%r11,8),%xmm3,%xmm2
    vmovsd -0x28(%r9,%r11,8),%xmm3
    vmulsd 0x10(%rsi,%r11,8),%xmm3,%xmm3
    vaddsd %xmm2,%xmm1,%xmm1
    vaddsd %xmm3,%xmm1,%xmm1
    vmovsd -0x20(%r9,%r11,8),%xmm2
    vmulsd 0x18(%rsi,%r11,8),%xmm2,%xmm2
    vaddsd %xmm2,%xmm1,%xmm1
    vmovsd -0x18(%r9,%r11,8),%xmm2
    vmulsd 0x20(%rsi,%r11,8),%xmm2,%xmm2
    vmovsd -0x10(%r9,%r11,8),%xmm3
    vmulsd 0x28(%rsi,%r11,8),%xmm3,%xmm3
    vaddsd %xmm2,%xmm1,%xmm1
    vaddsd %xmm3,%xmm1,%xmm1
    vmovsd -0x8(%r9,%r11,8),%xmm2
    vmulsd 0x30(%rsi,%r11,8),%xmm2,%xmm2
    vaddsd %xmm2,%xmm1,%xmm1
    vmovsd (%r9,%r11,8),%xmm2
    vmulsd 0x38(%rsi,%r11,8),%xmm2,%xmm2
    add    $0x8,%r11
    vaddsd %xmm2,%xmm1,%xmm1
    cmp    %r11,%r8
    jne    b7890
# innermost loop 2: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    vmovsd (%r11,%rbp,8),%xmm2
    vmulsd (%r15,%rbp,8),%xmm2,%xmm2
    vaddsd %xmm2,%xmm1,%xmm1
    inc    %rbp
    cmp    %rbp,%rdi
    jne    b7940
