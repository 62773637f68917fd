# rust x86-64 baseline — hullsweep_variants::checked::wma
# innermost loop 1: 16 instructions, 1 multiplies, 16.00 instructions/element, bounds-check branch in loop: no
    xorps  %xmm2,%xmm2
    cvtsi2sd %r9,%xmm2
    mulsd  (%r10),%xmm2
    addsd  %xmm2,%xmm1
    divsd  %xmm0,%xmm1
    movsd  %xmm1,(%rdx,%rsi,8)
    inc    %rsi
    add    $0x8,%r8
    cmp    %r12,%rsi
    je     8f63a
    lea    0x0(,%rsi,8),%r10
    add    %r13,%r10
    xorpd  %xmm1,%xmm1
    mov    $0x1,%r9d
    test   %rdi,%rdi
    je     8f590
# innermost loop 2: 18 instructions, 2 multiplies, 9.00 instructions/element, bounds-check branch in loop: no
    xor    %r14d,%r14d
    cmp    %r15,%r9
    setb   %r14b
    xorps  %xmm2,%xmm2
    cvtsi2sd %r9,%xmm2
    lea    (%r9,%r14,1),%rax
    mulsd  (%r10),%xmm2
    addsd  %xmm1,%xmm2
    xorps  %xmm1,%xmm1
    cvtsi2sd %rax,%xmm1
    mulsd  0x8(%r10),%xmm1
    add    $0x10,%r10
    cmp    %r15,%rax
    adc    %r14,%r9
    addsd  %xmm2,%xmm1
    add    $0xfffffffffffffff0,%r11
    add    $0xfffffffffffffffe,%rcx
    jne    8f5e0
