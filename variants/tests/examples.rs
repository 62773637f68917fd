//! The examples work, not just build: the HTTP JSON endpoint is started on 127.0.0.1, port 0,
//! and answers a sweep with the reference's bits and a bad request with a 400 naming the value.

#[path = "../examples/http_json.rs"]
#[allow(dead_code)]
mod http_json;

use hullsweep_variants::{Threads, Variant, default_close, default_params};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

/// One HTTP/1.0 request; returns the status code and the body.
fn request(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).expect("a JSON body"))
}

#[test]
fn the_http_example_sweeps_with_the_reference_bits_and_names_bad_input() {
    let (addr, _server) = http_json::start("127.0.0.1:0").unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0);

    let mut close = default_close()[..3_000].to_vec();
    close[100] = f64::NAN; // goes over the wire as null
    let params = default_params()[..12].to_vec();
    let body = serde_json::json!({
        "close": close.iter().map(|&v| if v.is_nan() { None } else { Some(v) }).collect::<Vec<_>>(),
        "params": params,
        "fee_pct": 0.05,
    });
    let (status, got) = request(addr, "POST", "/sweep", &body.to_string());
    assert_eq!(status, 200, "{got}");
    let want = Variant::Reference
        .sweep(&close, &params, 0.05, Threads::Fixed(1))
        .unwrap();
    let pnl: Vec<f64> = serde_json::from_value(got["pnl"].clone()).unwrap();
    let trades: Vec<i64> = serde_json::from_value(got["trades"].clone()).unwrap();
    assert_eq!(trades, want.trades);
    assert!(
        pnl.iter()
            .zip(&want.pnl)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
    assert_eq!(got["variant"], Variant::fastest().name());

    let (status, err) = request(
        addr,
        "POST",
        "/sweep",
        r#"{"close": [1, -2], "params": [[2,1,1,2,1,1]]}"#,
    );
    assert_eq!(status, 400);
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains("bad price -2 at index 1"),
        "{err}"
    );
    let (status, err) = request(
        addr,
        "POST",
        "/sweep",
        r#"{"close": [1, 2], "params": [[2,1,1]]}"#,
    );
    assert_eq!(status, 400);
    assert!(
        err["error"].as_str().unwrap().contains("params[0]"),
        "{err}"
    );
    let (status, _) = request(addr, "GET", "/sweep", "");
    assert_eq!(status, 405);
    let (status, _) = request(addr, "POST", "/nope", "{}");
    assert_eq!(status, 404);
}
