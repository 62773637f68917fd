"""The boundary study's bare socket echo server, the "same bytes, no engine" baseline: the server,
its start in a process of its own, and the held call it alone answers (used by boundary_study.py)."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from hullsweep_rs import client as hc  # pip install ./pyext (scripts/test installs it in .venv)

BARE_HOLD = 250  # a request only the bare server knows: hold the call as a kernel would


def bare_echo_server(path: str, ready: threading.Event) -> None:
    """Plain Python: read [u32 len][body], answer [u32 len - 9][body after the 9-byte header].

    A body with opcode BARE_HOLD carries [f64 seconds] first: the server keeps its core busy that
    long, as the engine does while it computes, then answers [u32 8][f64 seconds it held]. That is
    the control for a call that blocks: the same bytes and the same wait, with no engine."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    ready.set()
    conn, _ = srv.accept()
    buf = bytearray(16 << 20)
    view = memoryview(buf)

    def fill(n: int) -> bool:
        got = 0
        while got < n:
            k = conn.recv_into(view[got:n])
            if not k:
                return False
            got += k
        return True

    while fill(4):
        (n,) = struct.unpack_from("<I", buf)
        if not fill(n):
            break
        if buf[0] == BARE_HOLD:
            (hold,) = struct.unpack_from("<d", buf, 9)
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < hold:
                pass
            conn.sendall(struct.pack("<Id", 8, time.perf_counter() - t0))
            continue
        sent = conn.sendmsg([struct.pack("<I", n - 9), view[9:n]])
        if sent < n - 5:  # a partial vectored send: finish with the rest of the payload
            conn.sendall(view[9 + max(sent - 4, 0) : n])
    conn.close()
    srv.close()


def start_bare_echo(tmp: Path):
    """The bare server runs in its own process so it does not share the client's GIL."""
    path = str(tmp / "bare.sock")
    code = (
        "import sys, threading; sys.path.insert(0, %r); import boundary_bare as b; "
        "b.bare_echo_server(%r, threading.Event())" % (str(Path(__file__).resolve().parent), path)
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 30
    while not os.path.exists(path):
        if time.time() > deadline:
            raise RuntimeError("bare echo server did not start")
        time.sleep(0.01)
    return proc, hc.Client.unix(path)


def bare_hold(client, hold_secs: float, payload: np.ndarray):
    """Round trip of a BARE_HOLD call carrying `payload`; returns (seconds, seconds held)."""
    head = struct.pack("<IBII", 9 + 8 + payload.nbytes, BARE_HOLD, payload.size, 0)
    t0 = time.perf_counter()
    body = client._call([head, np.array([hold_secs]), payload])
    rt = time.perf_counter() - t0
    return rt, struct.unpack("<d", body)[0]
