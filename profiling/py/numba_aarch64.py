"""numba's WMA as numba would compile it for an Apple core: numba's own LLVM IR, optimised and
emitted for aarch64 by llvmlite. A static prediction (nothing here runs on aarch64).

Usage: numba_aarch64.py OUTDIR CPU   (CPU: an LLVM aarch64 CPU name, e.g. apple-m2)
Writes OUTDIR/numba-wma-aarch64.ll and .s, prints one line `numba=... llvmlite=... llvm=...`.

numba compiles the kernel for the host, so its final IR is already shaped by the x86 cost model
(unroll factor, strength reduction). This script takes the module numba hands to its module
optimiser (after numba's own lowering and per-function passes, before the module pipeline), swaps
in an aarch64 target machine for CPU, and runs numba's two module pipelines on it exactly as
numba's codegen does (the "cheap" pass with its extra loop-rotate/instcombine/jump-threading,
then the full pipeline with numba's loop- and SLP-vectorize settings).
"""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))

import llvmlite  # noqa: E402
import llvmlite.binding as llvm  # noqa: E402
import numba  # noqa: E402
from numba.core import codegen, config  # noqa: E402

TRIPLE = "aarch64-unknown-linux-gnu"


def numba_ir_before_module_passes():
    """The `wma` module as numba's codegen hands it to `_optimize_final_module`."""
    captured = []
    original = codegen.CPUCodeLibrary._optimize_final_module

    def capture(self):
        captured.append((self.name, str(self._final_module)))
        return original(self)

    codegen.CPUCodeLibrary._optimize_final_module = capture
    try:
        import hullsweep_ref as ref

        disp = numba.njit(cache=False)(ref.wma.py_func)
        disp.compile((numba.types.float64[::1], numba.types.int64))
    finally:
        codegen.CPUCodeLibrary._optimize_final_module = original
    mods = [ir for name, ir in captured if name == "wma"]
    if not mods:
        raise SystemExit(f"numba compiled no 'wma' library (got {[n for n, _ in captured]})")
    return mods[-1]


def portable(ir):
    """numba links NRT_decref already lowered for x86: an x86 intrinsic for "atomic sub, was it
    1?". Put back the portable form so the aarch64 backend can emit it (it is not in the hot loop)."""

    def sub(m):
        res, ptr = m.group(1), m.group(2)
        tag = res[1:].replace(".", "_")
        return (
            f"%old_{tag} = atomicrmw sub ptr {ptr}, i64 1 monotonic, align 8\n"
            f"  %one_{tag} = icmp eq i64 %old_{tag}, 1\n"
            f"  {res} = zext i1 %one_{tag} to i8"
        )

    ir = re.sub(
        r"(%[\w.]+) = call i8 @llvm\.x86\.atomic\.sub\.cc\.i64\(ptr (%[\w.]+), i64 1, i32 4\)", sub, ir
    )
    ir = re.sub(r"^declare .*@llvm\.x86\..*$", "", ir, flags=re.M)
    if "llvm.x86" in ir:
        raise SystemExit("numba's IR uses an x86 intrinsic this script does not know how to port")
    return ir


def main():
    outdir, cpu = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    ir = portable(numba_ir_before_module_passes())
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=cpu, features="", opt=3)
    mod = llvm.parse_assembly(ir)
    mod.triple = TRIPLE
    mod.data_layout = str(tm.target_data)

    def builder(opt, loop_vectorize, slp_vectorize):
        pto = llvm.create_pipeline_tuning_options()
        pto.speed_level = opt
        pto.loop_vectorization = loop_vectorize
        pto.slp_vectorization = slp_vectorize
        return llvm.create_pass_builder(tm, pto)

    # numba's codegen (CPUCodeLibrary._optimize_final_module, default NUMBA_OPT=3): a cheap
    # pipeline at opt 0 without loop vectorisation plus three extra passes, then the full one.
    cheap = builder(0, False, False)
    pm = cheap.getModulePassManager()
    pm.add_loop_rotate_pass()
    pm.add_instruction_combine_pass()
    pm.add_jump_threading_pass()
    pm.run(mod, cheap)
    full = builder(int(config.OPT), bool(config.LOOP_VECTORIZE), bool(config.SLP_VECTORIZE))
    full.getModulePassManager().run(mod, full)
    mod.verify()
    with open(os.path.join(outdir, "numba-wma-aarch64.ll"), "w") as f:
        f.write(str(mod))
    with open(os.path.join(outdir, "numba-wma-aarch64.s"), "w") as f:
        f.write(tm.emit_assembly(mod))
    llvm_version = ".".join(map(str, llvm.llvm_version_info))
    print(f"numba={numba.__version__} llvmlite={llvmlite.__version__} llvm={llvm_version}")


if __name__ == "__main__":
    main()
