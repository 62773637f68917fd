"""Client for the hullsweep engine (`hullsweep serve`): protocol v1 plus the extensions of
engine/PROTOCOL-EXT.md. Standard library and numpy only (Client.shm also needs hullsweep_rs's
native module); an error frame raises EngineError.

    from hullsweep_rs.client import Client, EngineError
    with Client.unix("/tmp/hullsweep.sock") as c:
        pnl, trades = c.sweep(close, params)

Beyond loopback the server speaks TLS; Client.tls verifies it (a CA file, or a pinned
certificate) before the hello token is sent.
"""

# Arrays go out as vectored writes straight from numpy memory (no copy when already
# little-endian float64/int64 and contiguous); replies land in one buffer the results view.

from __future__ import annotations

import hashlib
import os
import socket
import ssl
import struct
import subprocess

import numpy as np

OP_SWEEP, OP_ECHO, OP_LOAD, OP_SWEEP_LOADED, OP_DROP, OP_SWEEP_TIMED, OP_SWEEP_LOADED_TIMED = range(7)
OP_HELLO = 7
OP_STREAM_OPEN, OP_STREAM_PUSH, OP_STREAM_CLOSE, OP_STREAM_STATE = range(8, 12)
ERROR_BIT = 0x8000_0000
_HEAD = struct.Struct("<IBII")  # length word + the 9-byte request header
_HEAD_ID = struct.Struct("<IBIIQ")  # ... plus a u64 series id (opcodes 3, 4, 6) or stream id (9-11)
_HEAD_FEE = struct.Struct("<IBIId")  # ... plus the f64 fee of a stream open (opcode 8)
_PUSH_ONE = struct.Struct("<IBIIQd")  # ... a whole one-bar push frame (opcode 9)
_EVENTS_HEAD = struct.Struct("<QII")  # push reply: bars after the push, closes, opens
_F8, _I8 = np.dtype("<f8"), np.dtype("<i8")

#: A push reply's records (engine/PROTOCOL-EXT.md), packed little-endian as they come.
CLOSE_DTYPE = np.dtype(
    [("combo", "<u4"), ("side", "i1"), ("entry_bar", "<u8"), ("exit_bar", "<u8"),
     ("entry_price", "<f8"), ("exit_price", "<f8"), ("pnl", "<f8")]
)
OPEN_DTYPE = np.dtype([("combo", "<u4"), ("side", "i1"), ("bar", "<u8"), ("price", "<f8")])
# A push without events returns views of these (nothing in them to share or change).
_NO_CLOSES = np.empty(0, CLOSE_DTYPE)
_NO_OPENS = np.empty(0, OPEN_DTYPE)


class EngineError(Exception):
    """The server answered with an error frame; str(e) is its message."""


class ProtocolError(Exception):
    """The reply did not match the request (a client or server bug, or the wrong peer)."""


def _f64(a) -> np.ndarray:
    # Positional dtype object: numpy parses neither a keyword nor a string (a third of the cost
    # of a one-float echo otherwise).
    a = np.ascontiguousarray(a, _F8)
    return a if a.ndim == 1 else a.reshape(-1)


def _params(p) -> np.ndarray:
    p = np.ascontiguousarray(p, _I8)
    if p.size == 0:
        return p.reshape(0, 6)
    if p.ndim != 2 or p.shape[1] != 6:
        raise ValueError(f"params must be an n x 6 int64 array, got shape {p.shape}")
    return p


def _pem_sha256(path: str) -> str:
    """SHA-256 (hex) of the DER bytes of the first certificate in a PEM file."""
    with open(path, encoding="ascii") as f:
        text = f.read()
    end = "-----END CERTIFICATE-----"
    start = text.find("-----BEGIN CERTIFICATE-----")
    if start < 0 or end not in text[start:]:
        raise ValueError(f"pin {path}: holds no PEM certificate (-----BEGIN CERTIFICATE----- block)")
    block = text[start : text.index(end, start) + len(end)]
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(block)).hexdigest()


class Client:
    """One connection to an engine. Use Client.shm / Client.unix / Client.tcp / Client.tls /
    Client.spawn_stdio."""

    # Over shared memory the live calls (echo, a one-bar push) run whole in Rust: there the
    # Python around a call would cost more than the transport.
    _native = False

    def __init__(self, sock: socket.socket | None = None, proc: subprocess.Popen | None = None):
        self._sock = sock
        self._proc = proc

    # -- connecting ------------------------------------------------------------------------
    @classmethod
    def unix(cls, path: str) -> "Client":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return cls(sock=s)

    @classmethod
    def tcp(cls, host: str, port: int) -> "Client":
        s = socket.create_connection((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock=s)

    @classmethod
    def tls(cls, host: str, port: int, *, cafile: str | None = None, pin: str | None = None) -> "Client":
        """Connects over TLS (`hullsweep serve --tcp ADDR --tls-cert C --tls-key K`), verifying
        the server before anything is sent. Exactly one of:

        cafile: a PEM file of CA certificates; the server's certificate must chain to one of
            them and name `host` (a DNS name or an IP address);
        pin: the server's own certificate file (its --tls-cert, PEM; the first certificate
            counts); the server must present exactly that certificate (compared by SHA-256)
            and prove it holds its key. Neither the name nor the dates are checked.

        A refused server raises ssl.SSLCertVerificationError (or another ssl.SSLError) saying why.
        Then call hello(token) as on plain TCP: it crosses encrypted. TLS 1.3 only.
        """
        if (cafile is None) == (pin is None):
            raise ValueError("give exactly one of cafile= (a CA PEM file) or pin= (the server's certificate PEM file)")
        if cafile is not None:
            ctx = ssl.create_default_context(cafile=cafile)
        else:
            want = _pem_sha256(pin)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            # The pin replaces chain and name checks; the handshake still proves the server
            # holds the pinned certificate's key.
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        raw = socket.create_connection((host, port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            s = ctx.wrap_socket(raw, server_hostname=host)
        except BaseException:
            raw.close()
            raise
        if pin is not None:
            got = hashlib.sha256(s.getpeercert(binary_form=True) or b"").hexdigest()
            if got != want:
                s.close()
                raise ssl.SSLCertVerificationError(
                    f"{host}:{port}: the server's certificate (sha256 {got}) is not the pinned one "
                    f"(sha256 {want}, from {pin})"
                )
        return cls(sock=s)

    @classmethod
    def shm(cls, name: str, wait: str = "spin") -> "Client":
        """Connects over shared memory to `hullsweep serve --shm NAME` on this machine: every
        method works as over a socket, at a fraction of its cost. The waiting is done in Rust
        (hullsweep_rs's native module) with the GIL released; wait= "spin" (the default: poll
        50 µs, then sleep), "busy" (poll: lowest latency, a core while waiting) or "event".
        Each request is one native call (frame out, whole reply back), so threads sharing the
        client take turns."""
        from hullsweep_rs._native import ShmSocket

        c = cls(sock=ShmSocket(name, wait, EngineError, ProtocolError, CLOSE_DTYPE, OPEN_DTYPE))
        c._native = True
        # _call in one native call, under one GIL release: the frame out, the whole reply back,
        # and an error frame raised as EngineError (also after a failed write), as _call does.
        c._call = c._sock.call
        return c

    @classmethod
    def spawn_stdio(cls, argv: list[str]) -> "Client":
        """Spawns e.g. ["hullsweep", "serve", "--stdio"]; close() ends its input and waits."""
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        return cls(proc=proc)

    def close(self) -> None:
        self.__dict__.pop("_call", None)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
            self._proc.stdout.close()
            self._proc = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- framing ---------------------------------------------------------------------------
    def _send(self, parts: list) -> None:
        # Byte views of every non-empty part (numpy refuses to cast an empty array's view).
        views = [memoryview(p).cast("B") for p in parts if getattr(p, "nbytes", len(p))]
        if isinstance(self._sock, ssl.SSLSocket):
            # No sendmsg over TLS: small requests go as one write (one record), large parts
            # one by one without a copy.
            if sum(len(v) for v in views) <= 1 << 16:
                self._sock.sendall(b"".join(views))
            else:
                for v in views:
                    self._sock.sendall(v)
            return
        while views:
            if self._sock is not None:
                n = self._sock.sendmsg(views)
            else:
                n = os.writev(self._proc.stdin.fileno(), views)
            # Drop what was written; keep the unwritten tail of a partly written part.
            while views and n >= len(views[0]):
                n -= len(views[0])
                views.pop(0)
            if views and n:
                views[0] = views[0][n:]

    def _recv_into(self, view: memoryview) -> None:
        got = 0
        while got < len(view):
            if self._sock is not None:
                n = self._sock.recv_into(view[got:])
            else:
                n = self._proc.stdout.readinto(view[got:])
            if not n:
                raise ConnectionError(f"engine closed the stream after {got} of {len(view)} bytes")
            got += n

    def _reply(self) -> bytearray:
        head = bytearray(4)
        self._recv_into(memoryview(head))
        (word,) = struct.unpack("<I", head)
        body = bytearray(word & ~ERROR_BIT)
        self._recv_into(memoryview(body))
        if word & ERROR_BIT:
            raise EngineError(body.decode("utf-8", "replace"))
        return body

    def _call(self, parts: list) -> bytearray:
        try:
            self._send(parts)
        except OSError as sent:
            # The server may have refused the frame early (over its size limit) and closed;
            # its error frame can still be waiting to be read, and says why.
            try:
                self._reply()
            except EngineError:
                raise
            except Exception:
                pass
            raise sent
        return self._reply()

    @staticmethod
    def _sweep_reply(body: bytearray, n: int, timed: bool):
        want = 16 * n + (8 if timed else 0)
        if len(body) != want:
            raise ProtocolError(f"sweep reply of {len(body)} bytes, expected {want}")
        pnl = np.frombuffer(body, _F8, n)
        trades = np.frombuffer(body, _I8, n, 8 * n)
        if timed:
            (secs,) = struct.unpack_from("<d", body, 16 * n)
            return pnl, trades, secs
        return pnl, trades

    # -- operations ------------------------------------------------------------------------
    def sweep(self, close, params):
        """Opcode 0: returns (pnl float64[n], trades int64[n]) with the server's variant and fee."""
        c, p = _f64(close), _params(params)
        head = _HEAD.pack(9 + c.nbytes + p.nbytes, OP_SWEEP, c.size, p.shape[0])
        return self._sweep_reply(self._call([head, c, p]), p.shape[0], False)

    def sweep_timed(self, close, params):
        """Opcode 5: (pnl, trades, seconds the kernel took inside the server)."""
        c, p = _f64(close), _params(params)
        head = _HEAD.pack(9 + c.nbytes + p.nbytes, OP_SWEEP_TIMED, c.size, p.shape[0])
        return self._sweep_reply(self._call([head, c, p]), p.shape[0], True)

    def echo(self, close) -> np.ndarray:
        """Opcode 1: the series back, verbatim."""
        c = _f64(close)
        if self._native:
            return self._sock.echo(c)
        body = self._call([_HEAD.pack(9 + c.nbytes, OP_ECHO, c.size, 0), c])
        if len(body) != c.nbytes:
            raise ProtocolError(f"echo reply of {len(body)} bytes for {c.size} floats")
        return np.frombuffer(body, _F8)

    def load(self, close) -> int:
        """Opcode 2: keeps the series on this connection; returns its id."""
        c = _f64(close)
        body = self._call([_HEAD.pack(9 + c.nbytes, OP_LOAD, c.size, 0), c])
        if len(body) != 8:
            raise ProtocolError(f"load reply of {len(body)} bytes")
        return struct.unpack("<Q", body)[0]

    def sweep_loaded(self, series_id: int, params):
        """Opcode 3: sweeps over a loaded series; only the params travel."""
        p = _params(params)
        head = _HEAD_ID.pack(17 + p.nbytes, OP_SWEEP_LOADED, 0, p.shape[0], series_id)
        return self._sweep_reply(self._call([head, p]), p.shape[0], False)

    def sweep_loaded_timed(self, series_id: int, params):
        """Opcode 6: (pnl, trades, kernel seconds inside the server) over a loaded series."""
        p = _params(params)
        head = _HEAD_ID.pack(17 + p.nbytes, OP_SWEEP_LOADED_TIMED, 0, p.shape[0], series_id)
        return self._sweep_reply(self._call([head, p]), p.shape[0], True)

    def drop(self, series_id: int) -> None:
        """Opcode 4: frees a loaded series."""
        self._call([_HEAD_ID.pack(17, OP_DROP, 0, 0, series_id)])

    # -- live streams (opcodes 8 to 11) ----------------------------------------------------
    def open_stream(self, params, fee_pct: float = 0.09) -> int:
        """Opcode 8: opens a live stream of the combos at fee_pct on this connection; returns
        its id. The stream dies with the connection."""
        p = _params(params)
        head = _HEAD_FEE.pack(17 + p.nbytes, OP_STREAM_OPEN, 0, p.shape[0], float(fee_pct))
        body = self._call([head, p])
        if len(body) != 8:
            raise ProtocolError(f"open reply of {len(body)} bytes")
        return struct.unpack("<Q", body)[0]

    def push(self, stream_id: int, bars):
        """Opcode 9: pushes one bar (a float) or many (NaN = missing bar) to the stream.

        Returns (bars, closes, opens): the stream's bar count after the push, then its events
        as numpy structured arrays, closes (CLOSE_DTYPE: one row per closed trade) and opens
        (OPEN_DTYPE), each by bar, combos ascending within a bar; at a reversal a combo's close
        comes before its open. A bad price raises EngineError naming its bar in the stream,
        and nothing of the push is applied."""
        if isinstance(bars, float):
            if self._native:
                return self._sock.push_bar(stream_id, bars)
            # One bar, the live case: the whole frame in one pack, no array.
            body = self._call([_PUSH_ONE.pack(25, OP_STREAM_PUSH, 1, 0, stream_id, bars)])
        else:
            c = _f64(bars)
            head = _HEAD_ID.pack(17 + c.nbytes, OP_STREAM_PUSH, c.size, 0, stream_id)
            body = self._call([head, c])
        if len(body) < _EVENTS_HEAD.size:
            raise ProtocolError(f"push reply of {len(body)} bytes")
        count, n_closes, n_opens = _EVENTS_HEAD.unpack_from(body)
        if len(body) == _EVENTS_HEAD.size and not (n_closes or n_opens):
            return count, _NO_CLOSES.view(), _NO_OPENS.view()
        want = _EVENTS_HEAD.size + n_closes * CLOSE_DTYPE.itemsize + n_opens * OPEN_DTYPE.itemsize
        if len(body) != want:
            raise ProtocolError(f"push reply of {len(body)} bytes, expected {want}")
        closes = np.frombuffer(body, CLOSE_DTYPE, n_closes, _EVENTS_HEAD.size)
        opens = np.frombuffer(body, OPEN_DTYPE, n_opens, _EVENTS_HEAD.size + closes.nbytes)
        return count, closes, opens

    def close_stream(self, stream_id: int):
        """Opcode 10: closes the stream; returns (pnl float64[n], trades int64[n]), the batch
        sweep of every bar pushed."""
        body = self._call([_HEAD_ID.pack(17, OP_STREAM_CLOSE, 0, 0, stream_id)])
        if len(body) % 16:
            raise ProtocolError(f"close reply of {len(body)} bytes")
        return self._sweep_reply(body, len(body) // 16, False)

    def stream_state(self, stream_id: int) -> dict:
        """Opcode 11: {"bars", "pnl", "trades", "side", "entry_bar", "entry_price"} so far;
        side is 1 long, -1 short, 0 before the combo's first entry."""
        body = self._call([_HEAD_ID.pack(17, OP_STREAM_STATE, 0, 0, stream_id)])
        if len(body) < 8 or (len(body) - 8) % 40:
            raise ProtocolError(f"state reply of {len(body)} bytes")
        n = (len(body) - 8) // 40
        col = lambda k, dt: np.frombuffer(body, dt, n, 8 + 8 * n * k)  # noqa: E731
        return {
            "bars": struct.unpack_from("<Q", body)[0],
            "pnl": col(0, "<f8"),
            "trades": col(1, "<i8"),
            "side": col(2, "<i8"),
            "entry_bar": col(3, "<u8"),
            "entry_price": col(4, "<f8"),
        }

    def hello(self, token) -> None:
        """Opcode 7: presents the access token (bytes or str), first thing on a server started
        with --token-file; a wrong one raises EngineError and the server closes the connection."""
        t = token.encode() if isinstance(token, str) else bytes(token)
        body = self._call([_HEAD.pack(9 + len(t), OP_HELLO, len(t), 0), t])
        if body:
            raise ProtocolError(f"hello reply of {len(body)} bytes, expected none")


if __name__ == "__main__":
    # Smoke test: python -m hullsweep_rs.client unix PATH | tcp HOST PORT | stdio HULLSWEEP_BIN
    import sys

    kind = sys.argv[1]
    if kind == "unix":
        cl = Client.unix(sys.argv[2])
    elif kind == "tcp":
        cl = Client.tcp(sys.argv[2], int(sys.argv[3]))
    else:
        cl = Client.spawn_stdio([sys.argv[2], "serve", "--stdio"])
    with cl:
        x = 100.0 * np.cumprod(1.0 + 0.001 * np.random.default_rng(1).standard_normal(3000))
        grid = np.array([[n, max(n // 2, 1), max(int(n**0.5), 1), n, max(n // 2, 1), max(n // 3, 1)]
                         for n in (6, 20, 50)], dtype=np.int64)
        assert np.array_equal(cl.echo(x), x)
        pnl, trades = cl.sweep(x, grid)
        sid = cl.load(x)
        pnl2, trades2 = cl.sweep_loaded(sid, grid)
        assert np.array_equal(pnl, pnl2) and np.array_equal(trades, trades2)
        cl.drop(sid)
        try:
            cl.sweep(np.array([1.0, -1.0]), grid)
            raise SystemExit("expected an EngineError")
        except EngineError as e:
            print("error frame ok:", e)
        print("ok", pnl, trades)
