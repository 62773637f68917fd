//! The fastest variant behind a small HTTP JSON endpoint (tiny_http), a transport the engine's
//! socket protocol does not cover: `POST /sweep` with `{"close": [...], "params": [[6 ints], ...],
//! "fee_pct": 0.09}` (`fee_pct` optional) answers `{"pnl": [...], "trades": [...]}`; bad input
//! gets a 400 whose `error` names the bad value.
//!
//! ```sh
//! cargo run --release -p hullsweep-variants --example http_json -- 127.0.0.1:8080
//! curl -s localhost:8080/sweep -d '{"close": [100, 101, 102.5, 101.5, 103], "params": [[2, 1, 1, 2, 1, 1]]}'
//! ```
//!
//! JSON has no NaN: a missing bar is `null`. Numbers cross without loss both ways: `serde_json`
//! prints the shortest form that parses back to the same bits, and its `float_roundtrip` feature
//! (on in Cargo.toml) parses each to the nearest f64, so the sweep sees the client's exact prices.

use hullsweep_variants::{Combo, DEFAULT_FEE_PCT, Threads, Variant};
use serde_json::{Value, json};
use std::net::SocketAddr;
use tiny_http::{Header, Method, Response, Server};

/// Serves on `addr` (port 0: any free port) from a background thread; returns the bound address.
pub fn start(addr: &str) -> Result<(SocketAddr, std::thread::JoinHandle<()>), String> {
    let server = Server::http(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = server.server_addr().to_ip().ok_or("not an IP listener")?;
    let handle = std::thread::spawn(move || {
        for mut request in server.incoming_requests() {
            let (status, body) = match (request.method(), request.url()) {
                (Method::Post, "/sweep") => {
                    let mut text = String::new();
                    match request.as_reader().read_to_string(&mut text) {
                        Ok(_) => answer(&text),
                        Err(e) => (
                            400,
                            json!({ "error": format!("cannot read the body: {e}") }),
                        ),
                    }
                }
                (_, "/sweep") => (405, json!({ "error": "use POST /sweep" })),
                (_, url) => (
                    404,
                    json!({ "error": format!("no such endpoint {url}; POST /sweep") }),
                ),
            };
            let header = Header::from_bytes("Content-Type", "application/json").expect("static");
            let response = Response::from_string(body.to_string())
                .with_status_code(status)
                .with_header(header);
            // A client that hung up is its own problem; the server goes on serving.
            let _ = request.respond(response);
        }
    });
    Ok((bound, handle))
}

/// The status and JSON body for one request body.
fn answer(body: &str) -> (u16, Value) {
    match sweep(body) {
        Ok(v) => (200, v),
        Err(e) => (400, json!({ "error": e })),
    }
}

fn sweep(body: &str) -> Result<Value, String> {
    let req: Value = serde_json::from_str(body).map_err(|e| format!("body is not JSON: {e}"))?;
    let close: Vec<f64> = req["close"]
        .as_array()
        .ok_or("\"close\" must be an array of prices (null for a missing bar)")?
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Null => Ok(f64::NAN),
            v => v
                .as_f64()
                .ok_or(format!("close[{i}] = {v} is not a number")),
        })
        .collect::<Result<_, _>>()?;
    let params: Vec<Combo> = req["params"]
        .as_array()
        .ok_or("\"params\" must be an array of combos, each six integer windows")?
        .iter()
        .enumerate()
        .map(|(k, row)| {
            let bad = || format!("params[{k}] = {row} is not six integers");
            let row = row.as_array().filter(|r| r.len() == 6).ok_or_else(bad)?;
            let mut combo = [0i64; 6];
            for (c, v) in combo.iter_mut().zip(row) {
                *c = v.as_i64().ok_or_else(bad)?;
            }
            Ok(combo)
        })
        .collect::<Result<_, String>>()?;
    let fee = match &req["fee_pct"] {
        Value::Null => DEFAULT_FEE_PCT,
        v => v.as_f64().ok_or(format!("fee_pct = {v} is not a number"))?,
    };
    let r = Variant::fastest()
        .sweep(&close, &params, fee, Threads::Auto)
        .map_err(|e| e.to_string())?;
    Ok(json!({ "variant": Variant::fastest().name(), "pnl": r.pnl, "trades": r.trades }))
}

#[allow(dead_code)] // a test includes this file as a module and calls `start` itself
fn main() -> Result<(), String> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let (bound, handle) = start(&addr)?;
    eprintln!("serving POST http://{bound}/sweep (Ctrl-C stops)");
    handle
        .join()
        .map_err(|_| "the server thread panicked".to_string())
}
