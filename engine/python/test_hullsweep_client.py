"""The Python client against a real engine: every opcode over shared memory, Unix, TCP and stdio, error frames
as EngineError, and the equivalence gate against the numba reference when it is present."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

hc = pytest.importorskip("hullsweep_rs.client", reason="install it: pip install ./pyext")

ROOT = Path(__file__).resolve().parents[2]


def engine_binary() -> Path:
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "hullsweep"
        if p.exists():
            return p
    pytest.skip("no hullsweep binary: run cargo build first")


def series(n=3000):
    rng = np.random.default_rng(7)
    return 100.0 * np.cumprod(1.0 + 0.001 * rng.standard_normal(n))


PARAMS = np.array([[6, 3, 2, 6, 3, 2], [20, 10, 4, 20, 10, 6], [50, 25, 7, 50, 25, 16]], dtype=np.int64)


@pytest.fixture(params=["shm", "unix", "tcp", "stdio"])
def client(request, tmp_path):
    binary = str(engine_binary())
    common = ["--variant", "reference", "--threads", "1", "--max-frame", "262144"]
    if request.param == "stdio":
        c = hc.Client.spawn_stdio([binary, "serve", "--stdio", *common])
        yield c
        c.close()
        return
    where = {
        "unix": ["--unix", str(tmp_path / "e.sock")],
        "tcp": ["--tcp", "0"],
        "shm": ["--shm", f"pytest-{os.getpid()}-{tmp_path.name}"],
    }[request.param]
    proc = subprocess.Popen([binary, "serve", *where, *common], stdout=subprocess.PIPE, text=True)
    try:
        addr = proc.stdout.readline().split(" ", 2)[2].strip()
        if request.param == "shm":
            c = hc.Client.shm(addr)
        elif request.param == "unix":
            c = hc.Client.unix(addr)
        else:
            host, port = addr.rsplit(":", 1)
            c = hc.Client.tcp(host, int(port))
        yield c
        c.close()
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    if request.param == "unix":
        assert not os.path.exists(tmp_path / "e.sock")


def test_every_opcode_round_trips(client):
    x = series()
    odd = np.array([np.nan, 1e-300, 1e300, 3.5])
    assert np.array_equal(client.echo(odd).view(np.int64), odd.view(np.int64))
    assert client.echo(np.array([])).size == 0
    pnl, trades = client.sweep(x, PARAMS)
    sid = client.load(x)
    pnl2, trades2 = client.sweep_loaded(sid, PARAMS)
    assert np.array_equal(pnl, pnl2) and np.array_equal(trades, trades2)
    pnl3, trades3, secs = client.sweep_timed(x, PARAMS)
    assert np.array_equal(pnl, pnl3) and secs > 0
    assert client.sweep(x, PARAMS[:0])[0].size == 0
    client.drop(sid)
    with pytest.raises(hc.EngineError, match=f"unknown series id {sid}"):
        client.sweep_loaded(sid, PARAMS)


def test_error_frames_carry_the_message_and_the_connection_goes_on(client):
    x = series(200)
    bad = x.copy()
    bad[5] = -1.0
    with pytest.raises(hc.EngineError, match="bad price -1 at index 5"):
        client.sweep(bad, PARAMS)
    with pytest.raises(hc.EngineError, match="hma_sqrt = 0"):
        client.sweep(x, np.array([[5, 2, 0, 5, 2, 1]]))
    with pytest.raises(hc.EngineError, match="bad price inf"):
        client.load(np.array([1.0, np.inf]))
    assert client.sweep(x, PARAMS)[1].shape == (3,)


def test_an_oversize_request_raises_the_servers_reason(client):
    with pytest.raises(hc.EngineError, match="exceeds the limit of 262144 bytes"):
        client.echo(np.ones(1 << 20))


def test_results_pass_the_gate_against_numba(client):
    ref_dir = ROOT / "reference"
    if not (ref_dir / "hullsweep_ref.py").exists():
        pytest.skip("reference/hullsweep_ref.py not in this checkout")
    sys.path.insert(0, str(ref_dir))
    import hullsweep_ref

    x = series()
    want_pnl, want_trades = hullsweep_ref.sweep(x, PARAMS, 0.09)
    pnl, trades = client.sweep(x, PARAMS)
    assert np.array_equal(trades, want_trades)
    assert np.max(np.abs(pnl - want_pnl)) <= 1e-6


def test_a_wildcard_bind_needs_the_token(tmp_path):
    """--token-file over 0.0.0.0 (port 0), reached through 127.0.0.1 only: hello, then serve;
    a wrong or missing token is refused with the server's message."""
    binary = str(engine_binary())
    token = tmp_path / "token"
    token.write_bytes(b"a token of more than sixteen bytes\n")
    token.chmod(0o600)
    args = [binary, "serve", "--tcp", "0.0.0.0:0", "--token-file", str(token), "--insecure-plaintext",
            "--variant", "reference"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline().split(" ", 2)[2].strip().rsplit(":", 1)[1])
        with hc.Client.tcp("127.0.0.1", port) as c:
            c.hello(token.read_bytes().strip())
            pnl, trades = c.sweep(series(), PARAMS)
            assert pnl.shape == trades.shape == (3,)
        with hc.Client.tcp("127.0.0.1", port) as c:
            with pytest.raises(hc.EngineError, match="wrong access token"):
                c.hello("a token of more than sixteen bytez")
        with hc.Client.tcp("127.0.0.1", port) as c:
            with pytest.raises(hc.EngineError, match="access token first"):
                c.sweep(series(), PARAMS)
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_engine_readme_python_snippet_runs_as_written(tmp_path):
    # The README's Python block, verbatim, in a directory with close.npy and `hullsweep` on PATH.
    text = (ROOT / "engine" / "README.md").read_text()
    blocks = text.split("```python\n")
    assert len(blocks) == 2, "expected exactly one Python block in engine/README.md"
    snippet = blocks[1].split("```", 1)[0]
    binary = engine_binary()
    subprocess.run([str(binary), "data", "--bars", "3000", "--out", str(tmp_path / "close.npy")],
                   check=True, capture_output=True)
    env = {**os.environ, "PATH": f"{binary.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "refused:" in run.stdout and "-1" in run.stdout, run.stdout


def test_a_live_stream_replays_bar_by_bar_as_the_batch_sweep(tmp_path):
    """Over the Unix socket: a series with missing bars pushed one bar at a time (and the same
    in uneven chunks) gives the batch sweep's (pnl, trades) bit for bit, every closed trade
    once, summing to its combo's pnl in order; bad prices and unknown ids are refused by name."""
    binary = str(engine_binary())
    sock = tmp_path / "s.sock"
    proc = subprocess.Popen([binary, "serve", "--unix", str(sock), "--variant", "reference"],
                            stdout=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        x = series(2000)
        x[[3, 400, 401, 402, 1999]] = np.nan
        with hc.Client.unix(str(sock)) as c:
            want_pnl, want_trades = c.sweep(x, PARAMS)
            for chunks in ([1] * x.size, [1, 5, 300, 2, 700, 992]):
                sid = c.open_stream(PARAMS, 0.09)
                closes, at = [], 0
                for n in chunks:
                    bars, cl, op = c.push(sid, x[at:at + n])
                    at += n
                    assert bars == at
                    closes.append(cl.copy())
                    # Each open is at a bar of this push, combos ascending within a bar.
                    assert np.all((op["bar"] >= at - n) & (op["bar"] < at))
                    assert np.all(np.abs(op["side"]) == 1)
                state = c.stream_state(sid)
                pnl, trades = c.close_stream(sid)
                assert state["bars"] == x.size
                assert np.array_equal(pnl.view(np.int64), want_pnl.view(np.int64))
                assert np.array_equal(trades, want_trades)
                assert np.array_equal(state["pnl"].view(np.int64), want_pnl.view(np.int64))
                log = np.concatenate(closes)
                for k in range(len(PARAMS)):
                    mine = log[log["combo"] == k]
                    assert mine.size == want_trades[k]
                    assert np.all(mine["exit_bar"][:-1] <= mine["entry_bar"][1:])
                    total = 0.0
                    for t in mine["pnl"]:
                        total += float(t)
                    assert np.float64(total).view(np.int64) == want_pnl[k:k + 1].view(np.int64)[0]
            sid = c.open_stream(PARAMS, 0.09)
            c.push(sid, x[:100])
            bad = x[100:120].copy()
            bad[4] = 0.0
            with pytest.raises(hc.EngineError, match="bad price 0 at index 104"):
                c.push(sid, bad)
            assert c.stream_state(sid)["bars"] == 100
            c.close_stream(sid)
            with pytest.raises(hc.EngineError, match=f"unknown stream id {sid}"):
                c.push(sid, [100.0])
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_one_bar_floats_push_as_arrays_do_and_long_replies_come_back_whole(client):
    """A bar pushed as a float (one packed frame) gives what the same bar pushed as an array
    gives, events and all; pushes without events return empty, writable arrays of the record
    dtypes; a reply of more than 64 KiB (read straight into its bytearray over shm) is whole."""
    x = series(400)
    x[[10, 11, 250]] = np.nan
    a, b = client.open_stream(PARAMS, 0.09), client.open_stream(PARAMS, 0.09)
    quiet = busy = 0
    for i in range(x.size):
        bar = float(x[i]) if i % 2 else np.float64(x[i])
        got, want = client.push(a, bar), client.push(b, x[i:i + 1])
        assert got[0] == want[0] == i + 1
        for g, w, dtype in zip(got[1:], want[1:], (hc.CLOSE_DTYPE, hc.OPEN_DTYPE)):
            assert g.dtype == dtype and g.ndim == 1 and g.flags.writeable
            assert g.tobytes() == w.tobytes()
        quiet += got[1].size == got[2].size == 0
        busy += got[1].size + got[2].size > 0
    assert quiet and busy
    with pytest.raises(hc.EngineError, match="bad price -1"):
        client.push(a, -1.0)
    pnl, trades = client.close_stream(a)
    assert np.array_equal(pnl.view(np.int64), client.close_stream(b)[0].view(np.int64))
    big = series(20_000)
    back = client.echo(big)
    assert np.array_equal(back, big) and back.flags.writeable


@pytest.fixture
def shm_server(tmp_path):
    name = f"pytest-raw-{os.getpid()}-{tmp_path.name}"
    proc = subprocess.Popen([str(engine_binary()), "serve", "--shm", name, "--variant", "reference"],
                            stdout=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()
        yield name
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def echo_frame(values):
    v = np.asarray(values, dtype="<f8")
    return hc._HEAD.pack(9 + v.nbytes, hc.OP_ECHO, v.size, 0), v


def test_shm_call_takes_any_buffers_and_raises_error_frames_as_told(shm_server):
    import array

    from hullsweep_rs._native import ShmSocket

    s = ShmSocket(shm_server, "busy", hc.EngineError)
    head, v = echo_frame([1.5, -2.0])
    for parts in ([head, v], (head, v), [head + v.tobytes()], [bytearray(head), memoryview(v)],
                  [memoryview(head), array.array("d", [1.5, -2.0])], [head, v[:1], v[1:]]):
        body = s.call(parts)
        assert type(body) is bytearray and bytes(body) == v.tobytes()
    bad_head, bad = echo_frame([1.0])
    sweep_head = hc._HEAD.pack(9 + 8 + 48, hc.OP_SWEEP, 1, 1)
    with pytest.raises(hc.EngineError, match="hma_sqrt = 0"):
        s.call([sweep_head, bad, np.array([[5, 2, 0, 5, 2, 1]], dtype=np.int64)])
    assert bytes(s.call([head, v])) == v.tobytes()
    with pytest.raises(TypeError):
        s.call([head, "not bytes"])
    s.close()
    s.close()
    with pytest.raises(ConnectionError, match="closed"):
        s.call([head, v])
    plain = ShmSocket(shm_server)
    with pytest.raises(RuntimeError, match="hma_sqrt = 0"):
        plain.call([sweep_head, bad, np.array([[5, 2, 0, 5, 2, 1]], dtype=np.int64)])
    plain.close()


def test_shm_calls_from_many_threads_take_turns_and_close_wakes_a_waiting_one(shm_server):
    import threading

    with hc.Client.shm(shm_server, wait="spin") as c:
        wrong = []

        def run(k):
            for i in range(300):
                x = np.full(1 + (i + k) % 5, float(k * 1000 + i))
                if not np.array_equal(c.echo(x), x):
                    wrong.append((k, i))

        threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not wrong and not any(t.is_alive() for t in threads)

    from hullsweep_rs._native import ShmSocket

    s = ShmSocket(shm_server, "event", hc.EngineError)
    head, v = echo_frame([1.0])
    s.sendall(head[:6])  # half a frame: the server waits for the rest, so no reply comes
    got = []

    def wait_for_reply():
        try:
            got.append(s.recv_into(bytearray(4)))
        except ConnectionError as e:
            got.append(e)

    t = threading.Thread(target=wait_for_reply)
    t.start()
    t.join(timeout=0.3)
    assert t.is_alive(), "a reply came to half a frame"
    s.close()
    t.join(timeout=10)
    assert not t.is_alive()
    assert got == [0] or isinstance(got[0], ConnectionError), got


def test_shm_native_echo_and_push_bar_check_their_inputs(shm_server):
    """The calls Client.shm makes whole in Rust refuse what they cannot send, naming it, and
    give what the socket-shaped path gives."""
    from hullsweep_rs._native import ShmSocket

    with pytest.raises(ValueError, match="close_dtype has 21-byte records; the wire's are 45"):
        ShmSocket(shm_server, "spin", hc.EngineError, hc.ProtocolError, hc.OPEN_DTYPE, hc.OPEN_DTYPE)
    with pytest.raises(ValueError, match="give both or neither"):
        ShmSocket(shm_server, close_dtype=hc.CLOSE_DTYPE)
    with pytest.raises(TypeError, match="open_dtype must be a numpy dtype"):
        ShmSocket(shm_server, close_dtype=hc.CLOSE_DTYPE, open_dtype="f8")
    s = ShmSocket(shm_server, "spin", hc.EngineError, hc.ProtocolError)
    with pytest.raises(ValueError, match="push_bar needs the event dtypes"):
        s.push_bar(0, 100.0)
    x = np.array([1.5, np.nan, -0.0, 1e300])
    back = s.echo(x)
    assert back.dtype == np.float64 and back.tobytes() == x.tobytes() and back.flags.writeable
    assert s.echo(np.empty(0)).size == 0
    with pytest.raises(ValueError, match="close must be C-contiguous"):
        s.echo(np.arange(8.0)[::2])  # the client passes _f64's copy instead
    with pytest.raises(TypeError, match="got a 1-D int64 array"):
        s.echo(np.arange(3))
    with pytest.raises(hc.EngineError, match="unknown stream id 7"):
        ShmSocket(shm_server, "spin", hc.EngineError, hc.ProtocolError, hc.CLOSE_DTYPE,
                  hc.OPEN_DTYPE).push_bar(7, 100.0)
    assert np.array_equal(s.echo(x[:1]), x[:1])  # the connection goes on after the refusals
    s.close()
    with hc.Client.shm(shm_server) as c:
        assert np.array_equal(c.echo([1.0, 2.0]), [1.0, 2.0])  # a list goes through _f64
        assert np.array_equal(c.echo(np.arange(8.0)[::2]), np.arange(8.0)[::2])
