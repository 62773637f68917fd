# rust target-cpu=native — hullsweep_profiling::kernels::wma_signed_weight
# innermost loop 1: 10 instructions, 1 multiplies, 10.00 instructions/element, bounds-check branch in loop: YES
    lea    (%r9,%r11,1),%rax
    cmp    %rsi,%rax
    jae    9ffe1
    lea    0x1(%r11),%rax
    vcvtsi2sd %rax,%xmm15,%xmm2
    vmulsd (%rdi,%r11,8),%xmm2,%xmm2
    vaddsd %xmm2,%xmm1,%xmm1
    mov    %rax,%r11
    cmp    %rax,%rdx
    jne    9ff90
