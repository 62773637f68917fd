# Rust reference `hullsweep_kernel::wma`, built for aarch64-unknown-linux-gnu -C target-cpu=apple-m2: the hot loop (30 instructions, 8 elements per iteration)
    add v16.2d, v7.2d, v2.2d
    add v17.2d, v7.2d, v3.2d
    add v18.2d, v7.2d, v4.2d
    add v19.2d, v7.2d, v5.2d
    ldp q20, q21, [x15, #-32]
    ldp q22, q23, [x15], #64
    ucvtf v16.2d, v16.2d
    ucvtf v17.2d, v17.2d
    ucvtf v18.2d, v18.2d
    ucvtf v19.2d, v19.2d
    fmul v16.2d, v20.2d, v16.2d
    mov d20, v16.d[1]
    fmul v17.2d, v21.2d, v17.2d
    mov d21, v17.d[1]
    fmul v18.2d, v22.2d, v18.2d
    mov d22, v18.d[1]
    fmul v19.2d, v23.2d, v19.2d
    mov d23, v19.d[1]
    fadd d6, d6, d16
    fadd d6, d6, d20
    fadd d6, d6, d17
    fadd d6, d6, d21
    fadd d6, d6, d18
    fadd d6, d6, d22
    fadd d6, d6, d19
    fadd d6, d6, d23
    dup v16.2d, x11
    add v7.2d, v7.2d, v16.2d
    adds x14, x14, #8
    b.ne .LBB41_20

# llvm-mca-22 -mtriple=aarch64 -mcpu=apple-m2 -iterations=1000 -instruction-info
Iterations:        1000
Instructions:      30000
Total Cycles:      40012
Total uOps:        34000

Dispatch Width:    6
uOps Per Cycle:    0.85
IPC:               0.75
Block RThroughput: 8.7


Instruction Info:
[1]: #uOps
[2]: Latency
[3]: RThroughput
[4]: MayLoad
[5]: MayStore
[6]: HasSideEffects (U)

[1]    [2]    [3]    [4]    [5]    [6]    Instructions:
 1      2     0.33                        add	v16.2d, v7.2d, v2.2d
 1      2     0.33                        add	v17.2d, v7.2d, v3.2d
 1      2     0.33                        add	v18.2d, v7.2d, v4.2d
 1      2     0.33                        add	v19.2d, v7.2d, v5.2d
 2      4     0.50    *                   ldp	q20, q21, [x15, #-32]
 3      4     0.50    *                   ldp	q22, q23, [x15], #64
 1      2     0.33                        ucvtf	v16.2d, v16.2d
 1      2     0.33                        ucvtf	v17.2d, v17.2d
 1      2     0.33                        ucvtf	v18.2d, v18.2d
 1      2     0.33                        ucvtf	v19.2d, v19.2d
 1      5     0.50                        fmul	v16.2d, v20.2d, v16.2d
 1      2     0.33                        mov	d20, v16.d[1]
 1      5     0.50                        fmul	v17.2d, v21.2d, v17.2d
 1      2     0.33                        mov	d21, v17.d[1]
 1      5     0.50                        fmul	v18.2d, v22.2d, v18.2d
 1      2     0.33                        mov	d22, v18.d[1]
 1      5     0.50                        fmul	v19.2d, v23.2d, v19.2d
 1      2     0.33                        mov	d23, v19.d[1]
 1      5     0.33                        fadd	d6, d6, d16
 1      5     0.33                        fadd	d6, d6, d20
 1      5     0.33                        fadd	d6, d6, d17
 1      5     0.33                        fadd	d6, d6, d21
 1      5     0.33                        fadd	d6, d6, d18
 1      5     0.33                        fadd	d6, d6, d22
 1      5     0.33                        fadd	d6, d6, d19
 1      5     0.33                        fadd	d6, d6, d23
 2      7     0.50                        dup	v16.2d, x11
 1      2     0.33                        add	v7.2d, v7.2d, v16.2d
 1      1     0.25                        adds	x14, x14, #8
 1      0     0.50                        b.ne	.LBB41_20


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
0.50   0.50    -      -      -     0.75   0.75   0.75   0.75    -      -      -      -      -     1.50   1.50   8.67   8.67   8.67    -      -     2.00   2.00   

Resource pressure by instruction:
[0.0]  [0.1]  [1]    [2.0]  [2.1]  [3.0]  [3.1]  [3.2]  [3.3]  [4]    [5]    [6.0]  [6.1]  [7]    [8.0]  [8.1]  [9.0]  [9.1]  [9.2]  [10]   [11]   [12.0] [12.1] Instructions:
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -      -     add	v16.2d, v7.2d, v2.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -      -      -     add	v17.2d, v7.2d, v3.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.34   0.33   0.33    -      -      -      -     add	v18.2d, v7.2d, v4.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -      -     add	v19.2d, v7.2d, v5.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.50   0.50    -      -      -      -      -      -      -     ldp	q20, q21, [x15, #-32]
 -      -      -      -      -     0.25   0.25   0.25   0.25    -      -      -      -      -     0.50   0.50    -      -      -      -      -      -      -     ldp	q22, q23, [x15], #64
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -      -      -     ucvtf	v16.2d, v16.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.34   0.33   0.33    -      -      -      -     ucvtf	v17.2d, v17.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -      -     ucvtf	v18.2d, v18.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -      -      -     ucvtf	v19.2d, v19.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -     1.00   fmul	v16.2d, v20.2d, v16.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     mov	d20, v16.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -     1.00    -     fmul	v17.2d, v21.2d, v17.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     mov	d21, v17.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -     1.00   fmul	v18.2d, v22.2d, v18.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.34   0.33   0.33    -      -      -      -     mov	d22, v18.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -     1.00    -     fmul	v19.2d, v23.2d, v19.2d
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.34    -      -      -      -     mov	d23, v19.d[1]
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d6, d6, d16
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d6, d6, d20
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.34   0.33   0.33    -      -      -      -     fadd	d6, d6, d17
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d6, d6, d21
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d6, d6, d18
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d6, d6, d22
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d6, d6, d19
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.33   0.33    -      -      -      -     fadd	d6, d6, d23
 -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.50   0.50   0.33   0.33   0.33    -      -      -      -     dup	v16.2d, x11
 -      -      -      -      -      -      -      -      -      -      -      -      -      -      -      -     0.33   0.34   0.33    -      -      -      -     add	v7.2d, v7.2d, v16.2d
 -      -      -      -      -     0.25   0.25   0.25   0.25    -      -      -      -      -      -      -      -      -      -      -      -      -      -     adds	x14, x14, #8
0.50   0.50    -      -      -     0.25   0.25   0.25   0.25    -      -      -      -      -      -      -      -      -      -      -      -      -      -     b.ne	.LBB41_20
