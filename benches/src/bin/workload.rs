//! The shared memory workload runner (`shared/bench/WORKLOAD.md`, `maxim-memory-workload/1`).
//!
//! ```text
//! workload [--sizes 1000,10000,100000] [--out FILE] [--compare FILE] [--light]
//! workload --size N [--light]      (one size, in this process: the JSON object of that size)
//! workload --ips [--light]         (part i, in this process)
//! ```
//!
//! Without `--size` or `--ips`, the runner starts itself again once per size and once for
//! part i, so each size's peak resident set belongs to it alone, and assembles the workload's
//! JSON object. It prints the JSON and a Markdown table of the figures; `--out FILE` writes
//! the JSON to `FILE` and the table beside it (`FILE` with the extension `.md`); `--compare
//! FILE` sets every figure beside another implementation's output (the Python original's
//! `pymaxim-results.json`) with the speed-up and the worst one, and writes that table to
//! `FILE`'s name with `-compare.md` when `--out` is given. Build it in release mode:
//! `cargo xtask bench workload` does.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use maxim_benches::workload::{Options, report, run_ips, run_size};
use serde_json::{Value, json};

const USAGE: &str =
    "usage: workload [--sizes N,N,...] [--out FILE] [--compare FILE] [--light] | --size N | --ips";

struct Args {
    sizes: Vec<usize>,
    out: Option<PathBuf>,
    compare: Option<PathBuf>,
    light: bool,
    size: Option<usize>,
    ips: bool,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        sizes: vec![1000, 10_000, 100_000],
        out: None,
        compare: None,
        light: false,
        size: None,
        ips: false,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--sizes" => {
                a.sizes = value()?
                    .split(',')
                    .map(|s| {
                        s.trim().replace('_', "").parse::<usize>().map_err(|e| format!("--sizes: {s}: {e}"))
                    })
                    .collect::<Result<_, _>>()?;
                if let Some(&bad) = a.sizes.iter().find(|&&n| n < 10) {
                    return Err(format!(
                        "--sizes: {bad} is below 10 (the workload needs one concept per 10 episodes)"
                    ));
                }
            }
            "--size" => a.size = Some(value()?.parse().map_err(|e| format!("--size: {e}"))?),
            "--out" => a.out = Some(value()?.into()),
            "--compare" => a.compare = Some(value()?.into()),
            "--light" => a.light = true,
            "--ips" => a.ips = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("workload: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let opts = if args.light { Options::light() } else { Options::full() };
    if let Some(n) = args.size {
        let mut v = run_size(n, &opts);
        v["child_cpu_s"] = cpu_seconds();
        println!("{v}");
        return ExitCode::SUCCESS;
    }
    if args.ips {
        let mut v = run_ips(&opts);
        v["child_cpu_s"] = cpu_seconds();
        println!("{v}");
        return ExitCode::SUCCESS;
    }
    match parent(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("workload: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `self` with `extra` in a fresh process and parses its JSON; adds `child_wall_s`.
fn child(extra: &[String]) -> Result<Value, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let start = Instant::now();
    let out = Command::new(exe)
        .args(extra)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start the child process: {e}"))?;
    if !out.status.success() {
        return Err(format!("the child process {extra:?} failed: {}", out.status));
    }
    let mut v: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("the child's output: {e}"))?;
    v["child_wall_s"] = ((start.elapsed().as_secs_f64() * 100.0).round() / 100.0).into();
    Ok(v)
}

fn parent(args: &Args) -> Result<(), String> {
    let started = Instant::now();
    let started_utc = utc_now();
    let load_before = load_average();
    let light: Vec<String> = if args.light { vec!["--light".into()] } else { Vec::new() };
    let mut sizes = serde_json::Map::new();
    for &n in &args.sizes {
        let mut extra = vec!["--size".to_owned(), n.to_string()];
        extra.extend(light.iter().cloned());
        sizes.insert(n.to_string(), child(&extra)?);
    }
    let mut extra = vec!["--ips".to_owned()];
    extra.extend(light.iter().cloned());
    let ips = child(&extra)?;
    let output = json!({
        "workload": maxim_benches::WORKLOAD,
        "implementation": "maxim (Rust)",
        "machine": machine(),
        "mode": if args.light { "light (one repetition, one pass)" } else { "full" },
        "started_utc": started_utc,
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "total_wall_s": (started.elapsed().as_secs_f64() * 100.0).round() / 100.0,
        "sizes": sizes,
        "ips": ips,
    });
    let text = serde_json::to_string_pretty(&output).expect("JSON");
    let table = report::table(&output);
    println!("{text}\n\n{table}");
    if let Some(path) = &args.out {
        write(path, &(text + "\n"))?;
        write(&path.with_extension("md"), &table)?;
        eprintln!("workload: wrote {} and {}", path.display(), path.with_extension("md").display());
    }
    if let Some(path) = &args.compare {
        let theirs = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let theirs: Value = serde_json::from_str(&theirs).map_err(|e| format!("{}: {e}", path.display()))?;
        let c = report::compare(&output, &theirs);
        let name = theirs["implementation"].as_str().unwrap_or("the other implementation");
        let text = format!("Set beside {name} ({}):\n\n{}", path.display(), c.markdown);
        println!("\n{text}");
        if let Some(out) = &args.out {
            let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("workload");
            let compared = out.with_file_name(format!("{stem}-compare.md"));
            write(&compared, &text)?;
            eprintln!("workload: wrote {}", compared.display());
        }
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The machine: processors, toolchain, maxim's version, platform, CPU model, one summary line.
fn machine() -> Value {
    let nproc = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let rustc = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".into(), |s| s.trim().to_owned());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let platform = format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH);
    let version = env!("CARGO_PKG_VERSION");
    json!({
        "nproc": nproc,
        "rustc": rustc,
        "maxim": version,
        "platform": platform,
        "cpu": cpu,
        "line": format!("nproc={nproc} {rustc} maxim={version} {platform} ({cpu})"),
    })
}

/// User + system CPU seconds of this process so far (`/proc/self/stat`, 100 ticks a
/// second), or null. Beside the child's wall time it shows how much of the machine the run
/// had: a single-threaded part on an idle machine gets about one second of CPU a second.
fn cpu_seconds() -> Value {
    let stat = std::fs::read_to_string("/proc/self/stat").ok();
    // The fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Option<Vec<u64>> = stat
        .as_deref()
        .and_then(|s| s.rsplit_once(')'))
        .map(|(_, rest)| rest.split_whitespace().skip(11).take(2).filter_map(|x| x.parse().ok()).collect());
    match fields.as_deref() {
        Some([utime, stime]) => json!(((utime + stime) as f64 / 100.0 * 100.0).round() / 100.0),
        _ => Value::Null,
    }
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), or null.
fn load_average() -> Value {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).filter_map(|x| x.parse::<f64>().ok()).collect::<Vec<_>>())
        .map_or(Value::Null, |v| json!(v))
}

/// Now, as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}
