//! The benchmark suite: which C program each benchmark is, which inputs it runs on (quick
//! and full), and how many timed repetitions each gets.

use std::path::{Path, PathBuf};

/// Where a benchmark's size or input file comes from.
#[derive(Debug, Clone)]
pub enum InputSource {
    /// A size argument handed to the program (steps, grid side, points).
    Size(u64),
    /// An ADBench file, relative to the data directory.
    File(&'static str),
}

/// One input a benchmark is timed on.
#[derive(Debug, Clone)]
pub struct Input {
    pub label: String,
    pub source: InputSource,
    /// Timed repetitions inside one process (each prints its own time).
    pub reps: u32,
}

impl Input {
    /// The program argument for this input: the size, or the file's full path.
    pub fn argument(&self, data_dir: &Path) -> String {
        match &self.source {
            InputSource::Size(n) => n.to_string(),
            InputSource::File(rel) => data_dir.join(rel).display().to_string(),
        }
    }

    /// The data file this input needs, if any.
    pub fn file(&self, data_dir: &Path) -> Option<PathBuf> {
        match &self.source {
            InputSource::Size(_) => None,
            InputSource::File(rel) => Some(data_dir.join(rel)),
        }
    }
}

/// One of the seven benchmarks.
#[derive(Debug, Clone)]
pub struct Benchmark {
    pub name: &'static str,
    /// The C file under bench/programs.
    pub source: &'static str,
    pub what: &'static str,
    pub inputs: Vec<Input>,
}

fn size(label: &str, n: u64, reps: u32) -> Input {
    Input { label: label.to_string(), source: InputSource::Size(n), reps }
}

fn file(rel: &'static str, reps: u32) -> Input {
    let label =
        Path::new(rel).file_stem().map_or(rel.to_string(), |s| s.to_string_lossy().into_owned());
    Input { label, source: InputSource::File(rel), reps }
}

/// All benchmarks, in the paper's order. `quick` keeps one modest input each, so that the
/// whole suite (builds of every ablation included) stays within minutes on two cores.
pub fn suite(quick: bool) -> Vec<Benchmark> {
    let reps = if quick { 3 } else { 5 };
    let pick = |quick_inputs: Vec<Input>, full_inputs: Vec<Input>| {
        if quick {
            quick_inputs
        } else {
            full_inputs
        }
    };
    vec![
        Benchmark {
            name: "gmm",
            source: "gmm.c",
            what: "ADBench Gaussian mixture objective, gradient w.r.t. alphas, means, icf",
            inputs: pick(
                vec![file("gmm/1k/gmm_d10_K25.txt", reps)],
                vec![
                    file("gmm/1k/gmm_d2_K5.txt", reps),
                    file("gmm/1k/gmm_d10_K25.txt", reps),
                    file("gmm/1k/gmm_d20_K50.txt", reps),
                    file("gmm/10k/gmm_d10_K25.txt", reps),
                ],
            ),
        },
        Benchmark {
            name: "ba",
            source: "ba.c",
            what: "ADBench bundle adjustment, gradient of the summed squared error",
            inputs: pick(
                vec![file("ba/ba1_n49_m7776_p31843.txt", reps)],
                vec![
                    file("ba/ba1_n49_m7776_p31843.txt", reps),
                    file("ba/ba5_n257_m65132_p225911.txt", reps),
                    file("ba/ba10_n1197_m126327_p563734.txt", reps),
                ],
            ),
        },
        Benchmark {
            name: "lstm",
            source: "lstm.c",
            what: "ADBench multi-layer LSTM loss, gradient w.r.t. main and extra parameters",
            inputs: pick(
                vec![file("lstm/lstm_l2_c1024.txt", reps)],
                vec![file("lstm/lstm_l2_c1024.txt", reps), file("lstm/lstm_l2_c4096.txt", reps)],
            ),
        },
        Benchmark {
            name: "euler",
            source: "euler.c",
            what: "explicit Euler on Lotka-Volterra (rhs by function pointer), d final / d (y0, theta)",
            inputs: pick(
                vec![size("1000 steps", 1000, reps)],
                vec![
                    size("10 steps", 10, reps),
                    size("1000 steps", 1000, reps),
                    size("100000 steps", 100_000, reps),
                ],
            ),
        },
        Benchmark {
            name: "rk4",
            source: "rk4.c",
            what: "RK4 on Lotka-Volterra (rhs by function pointer), d final / d (y0, theta)",
            inputs: pick(
                vec![size("1000 steps", 1000, reps)],
                vec![
                    size("10 steps", 10, reps),
                    size("1000 steps", 1000, reps),
                    size("100000 steps", 100_000, reps),
                ],
            ),
        },
        Benchmark {
            name: "fft",
            source: "fft.c",
            what: "recursive radix-2 FFT, gradient of a weighted spectral energy w.r.t. the input",
            inputs: pick(
                vec![size("n=4096", 4096, reps)],
                vec![size("n=1024", 1024, reps), size("n=65536", 65536, reps)],
            ),
        },
        Benchmark {
            name: "bruss",
            source: "bruss.c",
            what: "2-D Brusselator stencil (10 Euler steps), gradient w.r.t. the initial grid",
            inputs: pick(
                vec![size("64x64", 64, reps)],
                vec![size("32x32", 32, reps), size("128x128", 128, reps)],
            ),
        },
    ]
}
