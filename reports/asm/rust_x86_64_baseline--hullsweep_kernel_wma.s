# rust x86-64 baseline — hullsweep_kernel::wma
# innermost loop 1: 11 instructions, 1 multiplies, 11.00 instructions/element, bounds-check branch in loop: YES
    lea    (%rcx,%r9,1),%rdi
    cmp    %r14,%rdi
    jae    d5a0b
    lea    0x1(%r9),%rdi
    xorps  %xmm2,%xmm2
    cvtsi2sd %rdi,%xmm2
    mulsd  0x0(%r13,%r9,8),%xmm2
    addsd  %xmm2,%xmm1
    mov    %rdi,%r9
    cmp    %rdi,%r12
    jne    d5990
