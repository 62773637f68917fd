# Rust `get_unchecked` (lab `wma_unchecked`), built for aarch64-unknown-linux-gnu -C target-cpu=apple-m2: the hot loop (29 instructions, 8 elements per iteration)
    add v17.2d, v16.2d, v2.2d
    add v18.2d, v16.2d, v3.2d
    add v19.2d, v16.2d, v4.2d
    add v20.2d, v16.2d, v5.2d
    ldp q21, q22, [x13, #-32]
    ldp q23, q24, [x13], #64
    ucvtf v17.2d, v17.2d
    ucvtf v18.2d, v18.2d
    ucvtf v19.2d, v19.2d
    ucvtf v20.2d, v20.2d
    fmul v17.2d, v21.2d, v17.2d
    mov d21, v17.d[1]
    fmul v18.2d, v22.2d, v18.2d
    mov d22, v18.d[1]
    fmul v19.2d, v23.2d, v19.2d
    mov d23, v19.d[1]
    fmul v20.2d, v24.2d, v20.2d
    mov d24, v20.d[1]
    fadd d7, d7, d17
    fadd d7, d7, d21
    fadd d7, d7, d18
    fadd d7, d7, d22
    fadd d7, d7, d19
    fadd d7, d7, d23
    fadd d7, d7, d20
    fadd d7, d7, d24
    add v16.2d, v16.2d, v6.2d
    subs x12, x12, #8
    b.ne .LBB5_6

# llvm-mca-22 -mtriple=aarch64 -mcpu=apple-m2 -iterations=1000 -instruction-info
Iterations:        1000
Instructions:      29000
Total Cycles:      40012
Total uOps:        32000

Dispatch Width:    6
uOps Per Cycle:    0.80
IPC:               0.72
Block RThroughput: 8.3


Instruction Info:
[1]: #uOps
[2]: Latency
[3]: RThroughput
[4]: MayLoad
[5]: MayStore
[6]: HasSideEffects (U)

[1]    [2]    [3]    [4]    [5]    [6]    Instructions:
 1      2     0.33                        add	v17.2d, v16.2d, v2.2d
 1      2     0.33                        add	v18.2d, v16.2d, v3.2d
 1      2     0.33                        add	v19.2d, v16.2d, v4.2d
 1      2     0.33                        add	v20.2d, v16.2d, v5.2d
 2      4     0.50    *                   ldp	q21, q22, [x13, #-32]
 3      4     0.50    *                   ldp	q23, q24, [x13], #64
 1      2     0.33                        ucvtf	v17.2d, v17.2d
 1      2     0.33                        ucvtf	v18.2d, v18.2d
 1      2     0.33                        ucvtf	v19.2d, v19.2d
 1      2     0.33                        ucvtf	v20.2d, v20.2d
 1      5     0.50                        fmul	v17.2d, v21.2d, v17.2d
 1      2     0.33                        mov	d21, v17.d[1]
 1      5     0.50                        fmul	v18.2d, v22.2d, v18.2d
 1      2     0.33                        mov	d22, v18.d[1]
 1      5     0.50                        fmul	v19.2d, v23.2d, v19.2d
 1      2     0.33                        mov	d23, v19.d[1]
 1      5     0.50                        fmul	v20.2d, v24.2d, v20.2d
 1      2     0.33                        mov	d24, v20.d[1]
 1      5     0.33                        fadd	d7, d7, d17
 1      5     0.33                        fadd	d7, d7, d21
 1      5     0.33                        fadd	d7, d7, d18
 1      5     0.33                        fadd	d7, d7, d22
 1      5     0.33                        fadd	d7, d7, d19
 1      5     0.33                        fadd	d7, d7, d23
 1      5     0.33                        fadd	d7, d7, d20
 1      5     0.33                        fadd	d7, d7, d24
 1      2     0.33                        add	v16.2d, v16.2d, v6.2d
 1      1     0.25                        subs	x12, x12, #8
 1      0     0.50                        b.ne	.LBB5_6


Resources:
[0.0] - CyUnitB
[0.1] - CyUnitB
[1]   - CyUnitBR
[2.0] - CyUnitFloatDiv
[2.1] - CyUnitFloatDiv
[3.0] - CyUnitI
[3.1] - CyUnitI
[3.2] - CyUnitI
[3.3] - CyUnitI
[4]   - CyUnitID
[5]   - CyUnitIM
[6.0] - CyUnitIS
[6.1] - CyUnitIS
[7]   - CyUnitIntDiv
[8.0] - CyUnitLS
[8.1] - CyUnitLS
[9.0] - CyUnitV
[9.1] - CyUnitV
[9.2] - CyUnitV
[10]  - CyUnitVC
[11]  - CyUnitVD
[12.0] - CyUnitVM
[12.1] - CyUnitVM


Resource pressure per iteration:
[0.0]  [0.1]  [1]    [2.0]  [2.1]  [3.0]  [3.1]  [3.2]  [3.3]  [4]    [5]    [6.0]  [6.1]  [7]    [8.0]  [8.1]  [9.0]  [9.1]  [9.2]  [10]   [11]   [12.0] [12.1] 
0.50   0.50    -      -      -     0.75   0.75   0.75   0.75    -      -      -      -      -     1.00   1.00   8.33   8.33   8.33    -      -     2.00   2.00   

Resource pressure by instruction:
[0.0]  [0.1]  [1]    [2.0]  [2.1]  [3.0]  [3.1]  [3.2]  [3.3]  [4]    [5]    [6.0]  [6.1]  [7]    [8.0]  [8.1]  [9.0]  [9.1]  [9.2]  [10]   [11]   [12.0] [12.1] Instructions:
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -      -     add	v17.2d, v16.2d, v2.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     add	v18.2d, v16.2d, v3.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     add	v19.2d, v16.2d, v4.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.34   0.33   0.33    -      -      -      -     add	v20.2d, v16.2d, v5.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     1.00    -      -      -      -      -      -      -     ldp	q21, q22, [x13, #-32]
 -      -      -      -      -     0.25   0.25   0.25   0.25    -      -      -      -      -     1.00    -      -      -      -      -      -      -      -     ldp	q23, q24, [x13], #64
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     ucvtf	v17.2d, v17.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -      -      -     ucvtf	v18.2d, v18.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     ucvtf	v19.2d, v19.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     ucvtf	v20.2d, v20.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -     1.00   fmul	v17.2d, v21.2d, v17.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.34   0.33   0.33    -      -      -      -     mov	d21, v17.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -     1.00    -     fmul	v18.2d, v22.2d, v18.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -      -      -     mov	d22, v18.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -     1.00   fmul	v19.2d, v23.2d, v19.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.34   0.33   0.33    -      -      -      -     mov	d23, v19.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -     1.00    -     fmul	v20.2d, v24.2d, v20.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -      -     mov	d24, v20.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d7, d7, d17
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -      -      -     fadd	d7, d7, d21
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -      -     fadd	d7, d7, d18
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d7, d7, d22
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d7, d7, d19
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d7, d7, d23
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d7, d7, d20
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d7, d7, d24
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     add	v16.2d, v16.2d, v6.2d
 -      -      -      -      -     0.25   0.25   0.25   0.25    -      -      -      -      -      -      -      -      -      -      -      -      -      -     subs	x12, x12, #8
0.50   0.50    -      -      -     0.25   0.25   0.25   0.25    -      -      -      -      -      -      -      -      -      -      -      -      -      -     b.ne	.LBB5_6
