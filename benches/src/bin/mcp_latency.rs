//! Tool-call latency of `maxim mcp` over stdio: `mcp_latency [--maxim PATH] [--records N]
//! [--calls N]`.
//!
//! Seeds a memory of `--records` episodes (default 10,000) through the hub, starts the
//! `maxim` program on it (`--maxim`, default `target/release/maxim`; build it with
//! `cargo build --release -p maxim`) as `maxim mcp` with no write budget, initialises the
//! session with raw JSON-RPC lines over its pipes, and times `--calls` (default 500) calls
//! each of `recall` and `remember`, one at a time, from writing the request to reading its
//! reply. Prints p50, p90, p99 and the mean per tool.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use maxim::MemoryHub;
use maxim::hippocampus::NewEpisode;
use maxim::maxim_core::journal::SyncPolicy;
use serde_json::{Value, json};

type BoxError = Box<dyn std::error::Error>;

const USAGE: &str = "usage: mcp_latency [--maxim PATH] [--records N] [--calls N]";
const WORDS: [&str; 24] = [
    "kitchen", "garden", "kettle", "charger", "window", "battery", "route", "door", "lamp", "sensor", "map",
    "camera", "hall", "stairs", "dock", "mug", "table", "plant", "water", "light", "sofa", "rug", "box",
    "key",
];

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mcp_latency: {err}");
            ExitCode::FAILURE
        }
    }
}

/// A deterministic sentence for record `i`.
fn sentence(i: usize) -> String {
    let w = |k: usize| WORDS[(i.wrapping_mul(2_654_435_761).wrapping_add(k * 40_503)) % WORDS.len()];
    format!("note {i}: the {} near the {} was moved to the {} by the {}", w(1), w(2), w(3), w(4))
}

fn run(args: Vec<String>) -> Result<(), BoxError> {
    let mut maxim = PathBuf::from("target/release/maxim");
    let (mut records, mut calls) = (10_000usize, 500usize);
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--maxim" => maxim = it.next().ok_or(USAGE)?.into(),
            "--records" => records = it.next().ok_or(USAGE)?.parse()?,
            "--calls" => calls = it.next().ok_or(USAGE)?.parse()?,
            _ => return Err(USAGE.into()),
        }
    }
    let dir = tempfile::tempdir()?;
    let seeding = Instant::now();
    {
        let mut hub = MemoryHub::builder().data_dir(dir.path()).sync_policy(SyncPolicy::Never).open()?;
        for i in 0..records {
            let mut e = NewEpisode::default();
            e.perception.transcript = Some(sentence(i));
            hub.capture(e)?;
        }
        hub.on_session_end();
    }
    eprintln!("seeded {records} episodes in {:.1} s", seeding.elapsed().as_secs_f64());

    let mut child = Command::new(&maxim)
        .args(["mcp", "--writes-per-second", "0", "--data"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", maxim.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut line = String::new();
    let mut exchange = |message: &Value, reply: bool| -> Result<Value, BoxError> {
        writeln!(stdin, "{message}")?;
        stdin.flush()?;
        if !reply {
            return Ok(Value::Null);
        }
        line.clear();
        if stdout.read_line(&mut line)? == 0 {
            return Err("the server closed its output".into());
        }
        Ok(serde_json::from_str(&line)?)
    };
    exchange(
        &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "mcp_latency", "version": "0" } } }),
        true,
    )?;
    exchange(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }), false)?;

    let mut id = 1u64;
    for tool in ["recall", "remember"] {
        let mut times = Vec::with_capacity(calls);
        for i in 0..calls {
            let arguments = match tool {
                "recall" => json!({ "query": format!("where was the {} moved?", WORDS[i % WORDS.len()]) }),
                _ => json!({ "text": sentence(records + i) }),
            };
            id += 1;
            let request = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
            let start = Instant::now();
            let reply = exchange(&request, true)?;
            times.push(start.elapsed());
            if reply.get("error").is_some() || reply["result"]["isError"] == true {
                return Err(format!("{tool} failed: {reply}").into());
            }
        }
        report(tool, records, &mut times);
    }
    drop(stdin);
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("the server exited with {status}").into());
    }
    Ok(())
}

fn report(tool: &str, records: usize, times: &mut [Duration]) {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1e6;
    let mean = times.iter().map(Duration::as_secs_f64).sum::<f64>() / times.len() as f64 * 1e6;
    println!(
        "{tool:<9} over stdio at {records} records, {} calls: p50 {:.0} µs, p90 {:.0} µs, p99 {:.0} µs, mean {mean:.0} µs",
        times.len(),
        at(0.5),
        at(0.9),
        at(0.99)
    );
}
