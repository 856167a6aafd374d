//! Running a benchmark executable: its per-repetition times (the program prints one
//! `time <s>` line per repetition, so input parsing is never timed), the heap growth of a
//! repetition (`heap <bytes>` after each time, from bench/programs/heap_meter.c), its peak
//! RSS (wait4's rusage of the child), and the gradient check's verdict.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum RunError {
    #[error("cannot run {exe}: {source}")]
    Spawn { exe: String, source: std::io::Error },
    #[error("wait4 failed: {0}")]
    Wait(std::io::Error),
    #[error("exited with status {status}: {detail}")]
    Status { status: i32, detail: String },
    #[error("killed by signal {0}")]
    Signal(i32),
    #[error("printed no `time` lines")]
    NoTimes,
}

/// What one process printed and used.
pub struct RunOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub peak_rss_kib: u64,
}

/// Median, minimum and maximum of the repetitions, the peak RSS over the processes, and
/// the largest heap growth of one repetition (None when the build has no heap meter).
#[derive(Debug, Clone)]
pub struct Timing {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub samples: usize,
    pub peak_rss_kib: u64,
    pub heap_peak_bytes: Option<u64>,
}

/// What the timed processes of one variant printed and used, accumulated over rounds.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    pub times: Vec<f64>,
    pub peak_rss_kib: u64,
    pub heap_peak_bytes: Option<u64>,
}

impl Samples {
    pub fn merge(&mut self, other: Samples) {
        self.times.extend(other.times);
        self.peak_rss_kib = self.peak_rss_kib.max(other.peak_rss_kib);
        // `None` orders below every `Some`.
        self.heap_peak_bytes = self.heap_peak_bytes.max(other.heap_peak_bytes);
    }
}

/// Runs `exe args`, output to files in `work` (a check's mismatch list can outgrow a pipe),
/// and reaps it with wait4 to read its rusage.
pub fn run(exe: &Path, args: &[String], work: &Path) -> Result<RunOutput, RunError> {
    let spawn_error = |source| RunError::Spawn { exe: exe.display().to_string(), source };
    let out_path = work.join("run.stdout");
    let err_path = work.join("run.stderr");
    let stdout = File::create(&out_path).map_err(spawn_error)?;
    let stderr = File::create(&err_path).map_err(spawn_error)?;
    let child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(spawn_error)?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; zero is a valid value for every field.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own unreaped child; status and usage point to live locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if reaped != pid {
        return Err(RunError::Wait(std::io::Error::last_os_error()));
    }
    if libc::WIFSIGNALED(status) {
        return Err(RunError::Signal(libc::WTERMSIG(status)));
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Ok(RunOutput {
        stdout: read(&out_path),
        stderr: read(&err_path),
        exit_code: libc::WEXITSTATUS(status),
        // Linux reports ru_maxrss in KiB.
        peak_rss_kib: usage.ru_maxrss.max(0) as u64,
    })
}

fn first_line(text: &str) -> String {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string()
}

/// Runs a timing command (`primal|grad REPS ARG`): its per-repetition times, heap growth
/// and peak RSS.
pub fn samples(exe: &Path, args: &[String], work: &Path) -> Result<Samples, RunError> {
    let output = run(exe, args, work)?;
    if output.exit_code != 0 {
        return Err(RunError::Status {
            status: output.exit_code,
            detail: first_line(&output.stderr),
        });
    }
    let samples: Vec<f64> = output
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("time "))
        .filter_map(|v| v.trim().parse::<f64>().ok())
        .collect();
    if samples.is_empty() {
        return Err(RunError::NoTimes);
    }
    let heap_peak_bytes = output
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("heap "))
        .filter_map(|v| v.trim().parse::<i64>().ok())
        .map(|b| b.max(0) as u64)
        .max();
    Ok(Samples { times: samples, peak_rss_kib: output.peak_rss_kib, heap_peak_bytes })
}

/// Median, min and max of the samples (None when there are none).
pub fn summarize(samples: Samples) -> Option<Timing> {
    let Samples { mut times, peak_rss_kib, heap_peak_bytes } = samples;
    if times.is_empty() {
        return None;
    }
    times.sort_by(f64::total_cmp);
    let n = times.len();
    let median = if n % 2 == 1 { times[n / 2] } else { 0.5 * (times[n / 2 - 1] + times[n / 2]) };
    Some(Timing {
        median,
        min: times[0],
        max: times[n - 1],
        samples: n,
        peak_rss_kib,
        heap_peak_bytes,
    })
}

/// The verdict of `prog check`: Ok(max error) or Err(why it is wrong).
pub fn check(exe: &Path, work: &Path) -> Result<Result<f64, String>, RunError> {
    let output = run(exe, &["check".to_string()], work)?;
    let maxerr = output
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("maxerr "))
        .find_map(|v| v.trim().parse::<f64>().ok());
    let passed = output.exit_code == 0 && output.stdout.lines().any(|l| l.trim() == "ok");
    Ok(match (passed, maxerr) {
        (true, Some(err)) => Ok(err),
        (_, Some(err)) => Err(format!("max relative error {err:.2e} vs finite differences")),
        (_, None) => Err(format!(
            "check printed no verdict (exit {}): {}",
            output.exit_code,
            first_line(&output.stderr)
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_samples_keep_every_time_and_the_largest_memory() {
        let mut all = Samples::default();
        all.merge(Samples { times: vec![3.0, 1.0], peak_rss_kib: 10, heap_peak_bytes: None });
        all.merge(Samples { times: vec![2.0], peak_rss_kib: 7, heap_peak_bytes: Some(64) });
        all.merge(Samples { times: vec![4.0], peak_rss_kib: 9, heap_peak_bytes: Some(32) });
        let timing = summarize(all).expect("samples");
        assert_eq!((timing.median, timing.min, timing.max, timing.samples), (2.5, 1.0, 4.0, 4));
        assert_eq!((timing.peak_rss_kib, timing.heap_peak_bytes), (10, Some(64)));
    }

    #[test]
    fn no_samples_no_timing() {
        assert!(summarize(Samples::default()).is_none());
    }
}
