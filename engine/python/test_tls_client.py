"""The Python client over TLS against `hullsweep serve --tls-cert/--tls-key` beyond loopback,
with certificates made by `hullsweep tls-cert`: a verified sweep equals the in-process one bit
for bit (by CA and by pin); a wrong CA, name or pin is refused before the token is sent."""

import ssl
import subprocess
from pathlib import Path

import numpy as np
import pytest

hc = pytest.importorskip("hullsweep_rs.client", reason="install it: pip install ./pyext")
hullsweep_rs = pytest.importorskip("hullsweep_rs")

ROOT = Path(__file__).resolve().parents[2]
TOKEN = b"a token of more than sixteen bytes"
PARAMS = np.array([[6, 3, 2, 6, 3, 2], [20, 10, 4, 20, 10, 6], [50, 25, 7, 50, 25, 16]], dtype=np.int64)


def engine_binary() -> Path:
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "hullsweep"
        if p.exists():
            return p
    pytest.skip("no hullsweep binary: run cargo build first")


def tls_cert(out: Path, *hosts: str) -> Path:
    args = [str(engine_binary()), "tls-cert", "--out", str(out)]
    for h in hosts:
        args += ["--host", h]
    subprocess.run(args, check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A TLS server on 0.0.0.0 (port 0) with a token, reached through loopback only."""
    tmp = tmp_path_factory.mktemp("tls")
    tls = tls_cert(tmp / "tls")
    token = tmp / "token"
    token.write_bytes(TOKEN + b"\n")
    token.chmod(0o600)
    args = [str(engine_binary()), "serve", "--tcp", "0.0.0.0:0", "--token-file", str(token),
            "--tls-cert", str(tls / "cert.pem"), "--tls-key", str(tls / "key.pem"),
            "--variant", "reference", "--threads", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline().split(" ", 2)[2].strip().rsplit(":", 1)[1])
        yield tls, port, tmp
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def series(n=3000):
    rng = np.random.default_rng(7)
    return 100.0 * np.cumprod(1.0 + 0.001 * rng.standard_normal(n))


def assert_serves_exactly(c):
    c.hello(TOKEN)
    x = series()
    pnl, trades = c.sweep(x, PARAMS)
    want_pnl, want_trades = hullsweep_rs.sweep(x, PARAMS, variant="reference")
    assert np.array_equal(pnl.view(np.int64), np.asarray(want_pnl).view(np.int64))
    assert np.array_equal(trades, want_trades)
    big = np.linspace(1.0, 2.0, 100_000)  # 800 kB: sent in parts and received across many records
    assert np.array_equal(c.echo(big), big)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_a_tls_sweep_verified_by_the_ca_is_bit_identical(server, host):
    tls, port, _ = server
    with hc.Client.tls(host, port, cafile=str(tls / "ca.pem")) as c:
        assert_serves_exactly(c)


def test_a_pinned_certificate_is_enough(server):
    tls, port, _ = server
    with hc.Client.tls("127.0.0.1", port, pin=str(tls / "cert.pem")) as c:
        assert_serves_exactly(c)


def test_another_ca_or_a_name_not_in_the_certificate_is_refused(server, tmp_path):
    tls, port, _ = server
    other = tls_cert(tmp_path / "other")
    with pytest.raises(ssl.SSLCertVerificationError):
        hc.Client.tls("localhost", port, cafile=str(other / "ca.pem"))
    # The right CA, a name the certificate does not carry.
    narrow = tls_cert(tmp_path / "narrow", "engine.example")
    with pytest.raises(ssl.SSLCertVerificationError):
        hc.Client.tls("localhost", port, cafile=str(narrow / "ca.pem"))
    with hc.Client.tls("localhost", port, cafile=str(tls / "ca.pem")) as c:
        assert_serves_exactly(c)


def test_a_wrong_pin_is_refused(server, tmp_path):
    tls, port, _ = server
    other = tls_cert(tmp_path / "other")
    with pytest.raises(ssl.SSLCertVerificationError, match="not the pinned one"):
        hc.Client.tls("127.0.0.1", port, pin=str(other / "cert.pem"))
    with pytest.raises(ValueError, match="exactly one"):
        hc.Client.tls("127.0.0.1", port)
    with pytest.raises(ValueError, match="no PEM certificate"):
        hc.Client.tls("127.0.0.1", port, pin=str(tls / "key.pem"))


def test_a_plaintext_client_fails_cleanly_and_others_are_served(server):
    tls, port, _ = server
    plain = hc.Client.tcp("127.0.0.1", port)
    plain._sock.settimeout(30)
    with pytest.raises((ConnectionError, hc.ProtocolError, hc.EngineError)):
        plain.hello(TOKEN)
    plain.close()
    with hc.Client.tls("localhost", port, cafile=str(tls / "ca.pem")) as c:
        assert_serves_exactly(c)
