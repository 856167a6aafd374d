//! One `cargo test` per `tests/filetests/**/*.adir` file (libtest-mimic), so a failing
//! file shows up by name. `ADC_TEST_BLESS=1` rewrites precise-output blocks.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/filetests");
    let bless = std::env::var("ADC_TEST_BLESS").is_ok_and(|v| v == "1");
    let files =
        adc::filetest::collect(std::slice::from_ref(&root)).unwrap_or_else(|e| panic!("{e}"));
    let trials = files
        .into_iter()
        .map(|path: PathBuf| {
            let name = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
            Trial::test(name, move || adc::filetest::run_file(&path, bless).map_err(Failed::from))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
