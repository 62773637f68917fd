"""The boundary study's setup: the repository root, the fee, the numba reference, the default grid
and the engine processes it talks to (used by boundary_study.py)."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from hullsweep_rs import client as hc  # pip install ./pyext (scripts/test installs it in .venv)

ROOT = Path(__file__).resolve().parents[2]
FEE = 0.09
sys.path.insert(0, str(ROOT / "scripts"))
from report_header import Header  # noqa: E402,F401 (the reports' header, for the study's scripts)


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout


def load_reference(ref_dir: Path):
    path = ref_dir / "hullsweep_ref.py"
    if not path.exists():
        raise SystemExit(f"{path} not found: pass --ref-dir to a folder with hullsweep_ref.py")
    # A real import (not exec from a spec), so numba's on-disk cache can find the module again.
    sys.path.insert(0, str(ref_dir.resolve()))
    return importlib.import_module("hullsweep_ref"), path


def default_windows(length: int) -> list[int]:
    half = max(length // 2, 1)
    return [length, half, max(math.isqrt(length), 1), length, half, max(length // 3, 1)]


def default_grid() -> np.ndarray:
    lengths = [round(6 + 194 * k / 79) for k in range(80)]
    return np.array([default_windows(n) for n in lengths], dtype=np.int64)


class Servers:
    """Engine processes started for the study; all are stopped (SIGTERM) on exit."""

    def __init__(self, binary: Path, tmp: Path):
        self.binary, self.tmp, self.procs = binary, tmp, []

    def tls_dir(self) -> Path:
        """A certificate for 127.0.0.1 made by `hullsweep tls-cert` (once per study)."""
        d = self.tmp / "tls"
        if not d.exists():
            subprocess.run([str(self.binary), "tls-cert", "--out", str(d), "--host", "127.0.0.1"],
                           check=True, capture_output=True)
        return d

    def start(self, transport: str, variant: str):
        """Starts an engine and returns a client connected to it (see launch)."""
        return self.launch(transport, variant)()

    def launch(self, transport: str, variant: str, wait: str | None = None, threads: int = 1):
        """Starts an engine (`hullsweep serve`) and returns a function that opens a new client to
        it. transport: unix, tcp, tls (loopback TCP, a throwaway certificate from `hullsweep
        tls-cert`, the client verifying it by its CA) or shm (`--shm NAME`, under a name of this
        process's own; wait= is the server's `--wait`, busy, spin or event, and the client waits
        the same way; None = the defaults, spin)."""
        args = [str(self.binary), "serve", "--variant", variant, "--threads", str(threads)]
        if transport == "unix":
            path = self.tmp / f"engine-{len(self.procs)}.sock"
            args += ["--unix", str(path)]
        elif transport == "shm":
            args += ["--shm", f"boundary-{os.getpid()}-{len(self.procs)}"]
            args += ["--wait", wait] if wait else []
        else:
            args += ["--tcp", "127.0.0.1:0"]
        if transport == "tls":
            d = self.tls_dir()
            args += ["--tls-cert", str(d / "cert.pem"), "--tls-key", str(d / "key.pem")]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        line = p.stdout.readline().strip()
        if not line.startswith("listening "):
            raise RuntimeError(f"engine did not start: {args}")
        where = line.split(" ", 2)[2]
        if transport == "unix":
            return lambda: hc.Client.unix(where)
        if transport == "shm":
            return lambda: hc.Client.shm(where, wait or "spin")
        host, port = where.rsplit(":", 1)
        if transport == "tls":
            self.tls_port = int(port)
            ca = str(self.tls_dir() / "ca.pem")
            return lambda: hc.Client.tls(host, int(port), cafile=ca)
        return lambda: hc.Client.tcp(host, int(port))

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(timeout=30)


def variant_exists(binary: Path, name: str) -> bool:
    r = subprocess.run([str(binary), "serve", "--stdio", "--variant", name], input=b"",
                       capture_output=True)
    return r.returncode == 0
