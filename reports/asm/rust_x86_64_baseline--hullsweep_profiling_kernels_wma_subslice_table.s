# rust x86-64 baseline — hullsweep_profiling::kernels::wma_subslice_table
# innermost loop 1: 15 instructions, 4 multiplies, 3.75 instructions/element, bounds-check branch in loop: no
    movsd  -0x18(%r9,%r11,8),%xmm2
    movsd  -0x10(%r9,%r11,8),%xmm3
    mulsd  (%rsi,%r11,8),%xmm2
    mulsd  0x8(%rsi,%r11,8),%xmm3
    addsd  %xmm1,%xmm2
    movsd  -0x8(%r9,%r11,8),%xmm4
    mulsd  0x10(%rsi,%r11,8),%xmm4
    addsd  %xmm2,%xmm3
    movsd  (%r9,%r11,8),%xmm1
    mulsd  0x18(%rsi,%r11,8),%xmm1
    addsd  %xmm3,%xmm4
    add    $0x4,%r11
    addsd  %xmm4,%xmm1
    cmp    %r11,%r8
    jne    9dc10
# innermost loop 2: 6 instructions, 1 multiplies, 6.00 instructions/element, bounds-check branch in loop: no
    movsd  (%r11,%r15,8),%xmm2
    mulsd  (%r14,%r15,8),%xmm2
    addsd  %xmm2,%xmm1
    inc    %r15
    cmp    %r15,%rdi
    jne    9dc80
