# rust target-cpu=native — hullsweep_kernel::reference::wma
# innermost loop 1: 10 instructions, 1 multiplies, 10.00 instructions/element, bounds-check branch in loop: YES
    lea    (%r8,%r11,1),%rbx
    cmp    $0x1,%rbx
    je     efd58
    vcvtsi2sd %r11,%xmm15,%xmm2
    vmulsd -0x8(%rbp,%r11,8),%xmm2,%xmm2
    vaddsd %xmm2,%xmm1,%xmm1
    lea    0x1(%r13,%r11,1),%rbx
    inc    %r11
    cmp    $0x1,%rbx
    jne    efcd0
