"""Long-lived numba worker for the profiling lab: JIT is paid once, then timed sweeps on demand.

Protocol (one line each way): `run` -> `<wall_s> <trades_sum> <cpu_s>`; `faults` -> minor page faults of one sweep;
`result` -> JSON pnl/trades;
`asm DIR` -> writes numba's assembly and LLVM IR for wma/backtest into DIR; `quit`.
"""

import json
import os
import resource
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "reference"))

import numba  # noqa: E402
import llvmlite  # noqa: E402
import hullsweep_ref as ref  # noqa: E402


def main():
    close = np.fromfile(sys.argv[1], dtype="<f8")
    params = np.fromfile(sys.argv[2], dtype="<i8").reshape(-1, 6)
    fee = float(sys.argv[3])
    # Compile on a tiny input of the same types, so the timed calls never include the JIT.
    ref.sweep(close[:64].copy(), params[:1].copy(), fee)
    out = sys.stdout
    import llvmlite.binding as llb

    feats = llb.get_host_cpu_features()
    avx512 = "yes" if feats.get("avx512f") else "no"
    out.write(
        f"ready numba={numba.__version__} llvmlite={llvmlite.__version__} numpy={np.__version__} "
        f"numba_target_cpu={llb.get_host_cpu_name()} numba_avx512f={avx512}\n"
    )
    out.flush()
    last = None
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "run":
            c0 = time.process_time()
            t0 = time.perf_counter()
            last = ref.sweep(close, params, fee)
            dt = time.perf_counter() - t0
            dc = time.process_time() - c0
            out.write(f"{dt!r} {int(last[1].sum())} {dc!r}\n")
        elif cmd[0] == "faults":
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            last = ref.sweep(close, params, fee)
            after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            out.write(f"{after - before}\n")
        elif cmd[0] == "result":
            if last is None:
                last = ref.sweep(close, params, fee)
            pnl = [float(v).hex() for v in last[0]]
            out.write(json.dumps({"pnl_hex": pnl, "trades": [int(t) for t in last[1]]}) + "\n")
        elif cmd[0] == "asm":
            dump(cmd[1])
            out.write("ok\n")
        elif cmd[0] == "quit":
            break
        out.flush()


SWEEP_SIGNATURES = {
    "wma": (numba.types.float64[::1], numba.types.int64),
    "backtest": (numba.types.float64[::1],) * 3 + (numba.types.float64,),
}


def dump(outdir):
    os.makedirs(outdir, exist_ok=True)
    for name in ("wma", "backtest"):
        cached = getattr(ref, name)
        # numba returns no assembly for code loaded from its on-disk cache (the reference uses
        # cache=True), so recompile the same Python function with the same default flags, uncached.
        # wma and backtest call no other jitted function, so this is the code the sweep runs.
        disp = numba.njit(cache=False)(cached.py_func)
        # When the sweep came from the on-disk cache, these dispatchers never compiled in this
        # process and list no signatures: use the ones the sweep calls them with.
        for sig in list(cached.signatures) or [SWEEP_SIGNATURES[name]]:
            disp.compile(sig)
            with open(os.path.join(outdir, f"numba-{name}.s"), "w") as f:
                f.write(disp.inspect_asm(sig))
            with open(os.path.join(outdir, f"numba-{name}.ll"), "w") as f:
                f.write(disp.inspect_llvm(sig))
            break


if __name__ == "__main__":
    main()
