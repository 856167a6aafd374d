//! Development aid: `cargo run -p adc-frontend-llvm --example import -- FILE.bc` prints the
//! imported module (the `adc import` command does the same with options).

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: import FILE.bc");
        std::process::exit(2);
    };
    match adc_frontend_llvm::import_bitcode_file(std::path::Path::new(&path)) {
        Ok(module) => print!("{}", adc_ir::text::print_module(&module)),
        Err(e) => {
            eprintln!("{}", e.to_diagnostic());
            std::process::exit(1);
        }
    }
}
