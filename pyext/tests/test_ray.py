"""hullsweep_rs.ray on a three-node Ray cluster on this machine (127.0.0.1 only): sweep_many equals
hullsweep_rs.sweep bit for bit on the gate suite, loses a worker node mid-sweep and still returns
exact results, and refuses bad input before anything is submitted. One cluster serves the module
(Ray takes seconds to start)."""

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

# Ray's switch for a cluster confined to one host: every node, and every driver (the CLI's
# subprocess inherits it), then uses 127.0.0.1 instead of this machine's network address. It must
# be set before Ray is imported.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray", reason="install the [ray] extra: pip install './pyext[ray]'")
hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")
from hullsweep_rs import ray as hsray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
# Quick failure detection, so a removed node is declared dead in seconds rather than tens.
SYSTEM_CONFIG = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
                 "health_check_failure_threshold": 4}


def hullsweep_binary() -> Path:
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "hullsweep"
        if p.exists():
            return p
    pytest.skip("no hullsweep binary: run cargo build first")


def node_args(cpus):
    return {"num_cpus": cpus, "node_ip_address": LOOPBACK, "object_store_memory": 150 << 20}


@pytest.fixture(scope="module")
def cluster():
    head = {**node_args(1), "include_dashboard": False, "_system_config": SYSTEM_CONFIG,
            "dashboard_host": LOOPBACK}
    c = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(2):
        c.add_node(**node_args(1))
    c.wait_for_nodes()
    ray.init(address=c.address)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """The gate's datasets, as `hullsweep data --suite` writes them (Rust's own generator)."""
    d = tmp_path_factory.mktemp("suite")
    subprocess.run([str(hullsweep_binary()), "data", "--suite", str(d)], check=True,
                   capture_output=True)
    index = json.loads((d / "suite.json").read_text())
    for entry in index:
        entry["close_path"] = d / entry["close"]
        entry["params"] = np.load(d / entry["params"])
        # The very series the gate runs: the golden fixture's checksum of its bits.
        golden = json.loads((ROOT / "gate" / "tests" / "golden" / f"{entry['name']}.json").read_text())
        close = np.load(entry["close_path"])
        assert f"{fnv1a64(close.astype('<f8').tobytes()):#018x}" == golden["close_fnv1a64"]
    assert len(index) == len(list((ROOT / "gate" / "tests" / "golden").glob("*.json")))
    return index


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def same_bits(a, b):
    return a.dtype == b.dtype and np.array_equal(a.view(np.int64), b.view(np.int64))


def assert_exact(got, closes, params, fee):
    assert list(got) == list(closes)
    for name, close in closes.items():
        want_pnl, want_trades = hs.sweep(close, params, fee)
        pnl, trades = got[name]
        assert same_bits(pnl, want_pnl), name
        assert same_bits(trades, want_trades), name


def test_gate_suite_bit_for_bit(cluster, suite):
    # Each dataset as the gate runs it (its series, combos and fee), read from its .npy path, in
    # small chunks so the series is split over several tasks on all three nodes.
    for d in suite:
        chunk = max(1, len(d["params"]) // 7)
        got = hsray.sweep_many({d["name"]: d["close_path"]}, d["params"], d["fee"],
                               chunk_combos=chunk, progress=False)
        assert_exact(got, {d["name"]: np.load(d["close_path"])}, d["params"], d["fee"])


def test_many_series_in_one_call_with_measured_chunks(cluster, suite):
    closes = {d["name"]: np.load(d["close_path"]) for d in suite}
    # Ten combos of every dataset's (long windows, windows of one, ...) over every series.
    params = np.concatenate([d["params"][:10] for d in suite])
    got = hsray.sweep_many(closes, params, 0.09, progress=False)  # chunk size from the probe
    assert_exact(got, closes, params, 0.09)
    small = {k: closes[k] for k in ("nan_runs", "two_bars")}
    for variant in hs.variants():
        got = hsray.sweep_many(small, params, -0.05, variant=variant, chunk_combos=25,
                               progress=False)
        assert_exact(got, small, params, -0.05)


def test_a_task_that_raises_is_reported_with_its_series_and_combos(cluster, monkeypatch):
    @ray.remote(max_retries=0)
    def failing(close, params, start, stop, fee_pct, variant):
        if start == 4:
            raise ValueError("injected failure")
        return hs.sweep(close, params[start:stop], fee_pct, variant=variant, threads=1)

    monkeypatch.setattr(hsray, "_sweep_chunk", failing)
    want = r"(?s)series 'x', combos 4\.\.7: the task raised: .*injected failure"
    with pytest.raises(RuntimeError, match=want):
        hsray.sweep_many({"x": good()}, np.repeat(PARAMS, 6, axis=0), chunk_combos=4,
                         progress=False)


def test_plan_chunks_follows_the_measured_cost():
    bars = {"long": 1_000_000, "short": 1_000}
    plan = hsray.plan_chunks(bars, 20_000, 1e-9, cpus=4)
    # 1 ms a combo on the long series: TARGET_TASK_S worth; the short one caps at all combos.
    assert abs(plan["long"] - hsray.TARGET_TASK_S / 1e-3) <= 1
    assert plan["short"] == 20_000
    # On many CPUs, tasks shrink to give each CPU about four...
    plan = hsray.plan_chunks(bars, 20_000, 1e-9, cpus=64)
    assert abs(plan["long"] - 20.02 / (4 * 64) / 1e-3) <= 1
    # ... but a small sweep keeps MIN_TASK_S of work a task.
    plan = hsray.plan_chunks({"s": 100_000}, 1_000, 1e-9, cpus=8)
    assert abs(plan["s"] - hsray.MIN_TASK_S / 1e-4) <= 1
    assert hsray.plan_chunks(bars, 50, 1e-9, cpus=4, chunk_combos=7) == {"long": 7, "short": 7}


def test_empty_inputs_need_no_cluster(monkeypatch):
    refuse_cluster_work(monkeypatch)
    params = np.zeros((0, 6), dtype=np.int64)
    got = hsray.sweep_many({"a": np.array([1.0, 2.0])}, params, progress=False)
    assert got["a"][0].shape == (0,) and got["a"][1].dtype == np.int64
    assert hsray.sweep_many({}, np.ones((3, 6), dtype=np.int64), progress=False) == {}


def test_a_worker_node_lost_mid_sweep_changes_nothing(cluster, suite):
    # A fourth node with two CPUs joins, takes its share of a sweep, and is killed (no graceful
    # shutdown) while one of its workers is running a task, which is lost with it.
    doomed = cluster.add_node(**node_args(2))
    cluster.wait_for_nodes()
    warm_up(doomed)
    default = next(d for d in suite if d["name"] == "default")
    nan_runs = next(d for d in suite if d["name"] == "nan_runs")
    closes = {"default": np.load(default["close_path"]), "nan_runs": np.load(nan_runs["close_path"])}
    params = np.concatenate([default["params"]] * 4)
    result, error = {}, []

    def run():
        try:
            result.update(hsray.sweep_many(closes, params, 0.09, chunk_combos=20, progress=False))
        except BaseException as e:  # surfaced below
            error.append(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 120
    while not busy_workers(doomed) and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.002)
    assert busy_workers(doomed), "no task ran on the added node: the test proves nothing"
    cluster.remove_node(doomed, allow_graceful=False)
    assert t.is_alive(), "the sweep ended before the node was removed: make it longer"
    t.join(300)
    assert not t.is_alive(), "the sweep did not finish after the node loss"
    assert not error, error
    assert_exact(result, closes, params, 0.09)


def busy_workers(node):
    """The node's worker processes running a sweep task now (Ray titles them ray::TASK)."""
    raylet = node.all_processes["raylet"][0].process.pid
    busy = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            title = (d / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == raylet and title.startswith(b"ray::_sweep_chunk"):
            busy.append(int(d.name))
    return busy


def warm_up(node):
    """Starts the node's worker processes (each imports hullsweep_rs), so it takes its share of
    the sweep from the first task rather than after the others have done most of it."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    pin = NodeAffinitySchedulingStrategy(node.node_id, soft=False)
    one = np.array([1.0])
    refs = [ray.remote(lambda: hs.sweep(one, PARAMS)[1].size).options(
        scheduling_strategy=pin).remote() for _ in range(2)]
    assert ray.get(refs, timeout=120) == [2, 2]


def refuse_cluster_work(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("cluster work started for bad input")

    monkeypatch.setattr(hsray._sweep_chunk, "remote", refuse)
    monkeypatch.setattr(hsray.ray, "put", refuse)
    monkeypatch.setattr(hsray.ray, "init", refuse)


def good():
    return 100.0 * np.cumprod(1.0 + 0.001 * np.random.default_rng(3).standard_normal(500))


PARAMS = np.array([[6, 3, 2, 6, 3, 2], [20, 10, 4, 20, 10, 6]], dtype=np.int64)


@pytest.mark.parametrize(
    "series, params, kwargs, messages",
    [
        ({"ok": good(), "AAPL": np.r_[good(), -2.5]}, PARAMS, {},
         ["series 'AAPL'", "-2.5", "index 500"]),
        ({"ok": good(), "MSFT": np.r_[np.inf, good()]}, PARAMS, {}, ["series 'MSFT'", "inf"]),
        ({"f32": good().astype(np.float32)}, PARAMS, {}, ["series 'f32'", "float32", "float64"]),
        ({"2d": good().reshape(20, 25)}, PARAMS, {}, ["series '2d'", "2-D"]),
        ({"empty": np.array([], dtype=np.float64)}, PARAMS, {}, ["series 'empty'", "empty"]),
        ({"gone": "/nonexistent/gone.npy"}, PARAMS, {}, ["series 'gone'", "gone.npy"]),
        ({"txt": "prices.txt"}, PARAMS, {}, ["series 'txt'", ".npy or .csv"]),
        ({"list": [1.0, 2.0]}, PARAMS, {}, ["series 'list'", "list"]),
        ({7: good()}, PARAMS, {}, ["series name 7"]),
        ({"ok": good()}, np.array([[6, 3, 2, 6, 0, 2]], dtype=np.int64), {},
         ["params", "hma3_half = 0", "combo 0"]),
        ({"ok": good()}, PARAMS.astype(np.int32), {}, ["params", "int32", "int64"]),
        ({"ok": good()}, np.ones((2, 5), dtype=np.int64), {}, ["params", "n x 6"]),
        ({"ok": good()}, PARAMS, {"variant": "turbo"}, ["unknown variant 'turbo'", "fastest"]),
        ({"ok": good()}, PARAMS, {"fee_pct": float("nan")}, ["bad fee nan"]),
        ({"ok": good()}, PARAMS, {"fee_pct": "0.1"}, ["bad fee '0.1'"]),
        ({"ok": good()}, PARAMS, {"chunk_combos": 0}, ["chunk_combos", "0"]),
    ],
)
def test_bad_input_is_one_clear_error_and_no_cluster_work(monkeypatch, series, params, kwargs,
                                                           messages):
    refuse_cluster_work(monkeypatch)
    with pytest.raises(hsray.SweepInputError) as e:
        hsray.sweep_many(series, params, progress=False, **kwargs)
    for m in messages:
        assert m in str(e.value), (m, str(e.value))


def test_every_bad_series_is_named_in_the_one_error(monkeypatch):
    refuse_cluster_work(monkeypatch)
    with pytest.raises(hsray.SweepInputError) as e:
        hsray.sweep_many({"a": np.r_[good(), 0.0], "b": good(), "c": good().astype(np.float32)},
                         PARAMS, progress=False)
    assert len(e.value.problems) == 2
    assert "series 'a'" in e.value.problems[0] and "series 'c'" in e.value.problems[1]


@pytest.mark.parametrize(
    "text, want",
    [
        ("close\n1.5\n2\n", [1.5, 2.0]),
        ("close\n\n2\n3\n", [np.nan, 2.0, 3.0]),  # empty cell at the start
        ("close\n1\n\n3\n", [1.0, np.nan, 3.0]),  # ... in the middle
        ("close\n1\n2\n\n", [1.0, 2.0, np.nan]),  # ... at the end (pandas writes NaN this way)
        ("close\r\n1\r\n\r\n3\r\n", [1.0, np.nan, 3.0]),  # CRLF
        ("close\n1\n2", [1.0, 2.0]),  # no final newline
        ("date,close,volume\nd1,1.25,9\nd2,,9\nd3,3,\n", [1.25, np.nan, 3.0]),
        ("price\n4\n5\n", [4.0, 5.0]),  # the only column, whatever its name
    ],
)
def test_csv_series_keep_every_bar(tmp_path, text, want):
    p = tmp_path / "s.csv"
    p.write_bytes(text.encode())
    got = hsray.load_series(p)
    assert got.dtype == np.float64 and len(got) == len(want)
    assert np.array_equal(got, np.array(want), equal_nan=True)


@pytest.mark.parametrize(
    "text, message",
    [
        ("close\n", "empty"),  # header only: no bars
        ("a,b\n1,2\n", "no 'close' column"),
        ("close\n1\nabc\n", "line 3 (bar 1): 'abc'"),
    ],
)
def test_bad_csv_is_refused_by_line(monkeypatch, tmp_path, text, message):
    refuse_cluster_work(monkeypatch)
    p = tmp_path / "s.csv"
    p.write_text(text)
    with pytest.raises(hsray.SweepInputError, match="series 's'") as e:
        hsray.sweep_many({"s": p}, PARAMS, progress=False)
    assert message in str(e.value)


def test_cli_rows_match_hullsweep_sweep(cluster, tmp_path):
    binary = str(hullsweep_binary())
    data = tmp_path / "data"
    data.mkdir()
    subprocess.run([binary, "data", "--bars", "3000", "--seed", "5", "--out",
                    str(data / "gbm.npy")], check=True, capture_output=True)
    csv_text = "date,close\n" + "".join(
        f"d{i},{'' if i == 7 else 100 + (i % 13) * 0.25}\n" for i in range(400))
    (data / "ticks.csv").write_text(csv_text)
    out = tmp_path / "r.csv"
    cmd = [sys.executable, "-m", "hullsweep_rs.ray", "--data", str(data), "--grid", "6:60:5",
           "--address", cluster.address, "--chunk-combos", "2", "--quiet", "--out", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = out.read_text().splitlines()
    assert rows[0] == "series,combo,hma_n,hma_half,hma_sqrt,hma3_m,hma3_half,hma3_third,pnl,trades"
    for name in ("gbm", "ticks"):
        want = subprocess.run([binary, "sweep", "--data", str(data / f"{name}.npy"
                                                                 if name == "gbm" else
                                                                 data / "ticks.csv"),
                               "--grid", "6:60:5", "--variant", "fastest"],
                              check=True, capture_output=True, text=True).stdout.splitlines()
        mine = [r.split(",", 1)[1] for r in rows[1:] if r.startswith(name + ",")]
        assert mine == want[1:], name
        assert want[0] == rows[0].split(",", 1)[1]


def test_cli_bad_input_exits_with_the_message(tmp_path):
    bad = tmp_path / "neg.npy"
    np.save(bad, np.array([1.0, -1.0]))
    run = subprocess.run([sys.executable, "-m", "hullsweep_rs.ray", "--data", str(bad),
                          "--grid", "6:60:5", "--quiet"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0
    assert "series 'neg'" in run.stderr and "-1" in run.stderr
    assert "Traceback" not in run.stderr


def test_progress_is_a_bar_on_a_terminal_and_a_line_every_few_seconds_in_a_log(monkeypatch):
    import io

    log = io.StringIO()  # not a terminal, as stderr is under CI or redirected to a file
    clock = iter([0.0, 1.0, 6.0, 7.0, 12.0])
    monkeypatch.setattr(hsray.time, "monotonic", lambda: next(clock))
    with hsray._Progress(4, True, log) as p:
        for _ in range(4):
            p.update(1)
    assert log.getvalue().splitlines() == [
        "sweep_many: 4 tasks submitted",
        "sweep_many: 2/4 tasks done (50%, 6.0 s)",  # 5 s after the last line
        "sweep_many: 4/4 tasks done (100%, 12.0 s)",  # and always the last one
    ]

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    monkeypatch.setattr(hsray.time, "monotonic", lambda: 0.0)
    with hsray._Progress(4, True, tty) as p:
        p.update(4)
    assert "4/4" in tty.getvalue() and "\r" in tty.getvalue()  # tqdm's bar, redrawn in place
    assert "tasks done" not in tty.getvalue()
    quiet = io.StringIO()
    with hsray._Progress(4, False, quiet) as p:
        p.update(4)
    assert quiet.getvalue() == ""


def test_starting_ray_is_announced_with_its_cost(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(hsray.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(hsray.ray, "init", lambda address=None: calls.append(address))
    hsray._start_ray(None, True)
    err = capsys.readouterr().err
    assert "starting a local Ray (about 8 s the first time" in err, err
    assert "Ray ready after" in err
    hsray._start_ray("10.0.0.1:6379", True)
    assert "connecting to the Ray cluster at 10.0.0.1:6379" in capsys.readouterr().err
    hsray._start_ray(None, False)
    assert capsys.readouterr().err == ""
    assert calls == [None, "10.0.0.1:6379", None]
    monkeypatch.setattr(hsray.ray, "is_initialized", lambda: True)
    hsray._start_ray(None, True)  # already connected: nothing to start, nothing said
    assert capsys.readouterr().err == "" and len(calls) == 3


def test_cli_grid_refuses_repeated_lengths_and_takes_grid3(tmp_path):
    series = tmp_path / "s.npy"
    np.save(series, 100.0 + np.arange(50.0))
    run = subprocess.run([sys.executable, "-m", "hullsweep_rs.ray", "--data", str(series),
                          "--grid", "6:10:20", "--quiet"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "K = 20 lengths do not fit in [6, 10]" in run.stderr and "K <= 5" in run.stderr
    run = subprocess.run([sys.executable, "-m", "hullsweep_rs.ray", "--data", str(series),
                          "--params", str(tmp_path / "p.npy"), "--grid3", "6:10:2", "--quiet"],
                         capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0 and "--grid3 needs --grid" in run.stderr, run.stderr


def test_files_are_read_by_the_tasks_in_pieces(cluster, tmp_path, monkeypatch):
    # An .npy and a Parquet path with files_in_tasks=True: the tasks read the files piece by
    # piece (pieces smaller than the series here, so boundaries are crossed), bit for bit
    # hullsweep_rs.sweep; nothing of the series goes into the object store.
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    monkeypatch.setattr(hsray, "_PIECE", 777)
    rng = np.random.default_rng(5)
    close = 100.0 * np.cumprod(1.0 + 0.002 * rng.standard_normal(5000))
    close[1500:1530] = np.nan
    np.save(tmp_path / "a.npy", close)
    mask = np.zeros(len(close), dtype=bool)
    mask[1500:1530] = True
    pq.write_table(pa.table({"Close": pa.array(close, mask=mask)}), tmp_path / "b.parquet",
                   row_group_size=900)
    params = hs.grid("4:120:6")
    puts = []
    real_put = ray.put
    monkeypatch.setattr(ray, "put", lambda x: puts.append(x) or real_put(x))
    got = hsray.sweep_many({"a": tmp_path / "a.npy", "b": str(tmp_path / "b.parquet")}, params,
                           chunk_combos=2, progress=False, files_in_tasks=True)
    assert all(p is params for p in puts), "only params went into the object store"
    assert_exact(got, {"a": close, "b": close}, params, 0.09)
    # The default reads the same files on the driver: the same bits.
    monkeypatch.setattr(ray, "put", real_put)
    got = hsray.sweep_many({"b": tmp_path / "b.parquet"}, params, progress=False)
    assert_exact(got, {"b": close}, params, 0.09)
    # A bad price deep in a file is named with its index before anything is submitted.
    close[4321] = -2.0
    np.save(tmp_path / "bad.npy", close)
    with pytest.raises(hsray.SweepInputError, match="bad price -2 at index 4321"):
        hsray.sweep_many({"bad": tmp_path / "bad.npy"}, params, progress=False,
                         files_in_tasks=True)
