//! CPU time and load readings the benchmarks print beside their wall times: on a shared
//! machine the wall clock grows with the other processes' load, a thread's CPU time much
//! less. Linux reads `/proc`; elsewhere every reading is 0 (or empty).
//!
//! ```
//! let start = maxim_benches::cpu::thread_cpu_ns();
//! let spin: u64 = (0..100_000u64).map(std::hint::black_box).sum();
//! assert!(spin > 0 && maxim_benches::cpu::thread_cpu_ns() >= start);
//! ```

/// The CPU time this thread has run, in nanoseconds (`/proc/thread-self/schedstat`).
pub fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|stat| stat.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The CPU time of the whole process (every thread), in clock ticks of 10 ms
/// (`/proc/self/stat`).
pub fn process_cpu_ticks() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            // utime and stime are the 12th and 13th fields after the command's parenthesis.
            let rest = stat.rsplit_once(')')?.1;
            let mut fields = rest.split_whitespace().skip(11);
            let user: u64 = fields.next()?.parse().ok()?;
            let system: u64 = fields.next()?.parse().ok()?;
            Some(user + system)
        })
        .unwrap_or(0)
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`).
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
