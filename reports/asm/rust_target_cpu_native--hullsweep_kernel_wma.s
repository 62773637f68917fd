# rust target-cpu=native — hullsweep_kernel::wma
# innermost loop 1: 10 instructions, 1 multiplies, 10.00 instructions/element, bounds-check branch in loop: YES
    lea    (%rcx,%r9,1),%rdi
    cmp    %r14,%rdi
    jae    d4a4b
    lea    0x1(%r9),%rdi
    vcvtsi2sd %rdi,%xmm15,%xmm2
    vmulsd 0x0(%r13,%r9,8),%xmm2,%xmm2
    vaddsd %xmm2,%xmm1,%xmm1
    mov    %rdi,%r9
    cmp    %rdi,%r12
    jne    d49d0
