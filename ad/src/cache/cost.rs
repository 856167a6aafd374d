//! The recompute-or-store cost model for calls of pure libm functions.
//!
//! Both sides are estimated in cycles per execution of the call's block (the trip
//! counts multiply both equally, so they cancel): recomputing costs the call again in
//! the reverse pass; storing costs the value's bytes written to a tape in the forward
//! pass and read back in the reverse pass, `STORE_CYCLES_PER_BYTE` per byte. A call is
//! recomputed when it costs no more than storing its result, which also needs its
//! arguments in the reverse pass (they are requested like any operand: recomputed,
//! re-read or stored themselves). See docs/src/ad.md ("Libm calls: recompute or store").

use adc_ir::{InstructionData, Module};

/// Cycles to store one byte in the forward pass and load it back in the reverse pass:
/// tapes outgrow the caches for long loops, so the write and the read each stream
/// through memory (~1–2 cycles per byte each on this class of machine, page faults of
/// growing tapes included); 4 per byte = 32 cycles for an `f64`.
pub const STORE_CYCLES_PER_BYTE: u64 = 4;

/// Estimated cycles of one call of a pure libm function (glibc on x86-64, throughput
/// of a call with its overhead), by base name; `None` for anything else.
pub fn libm_cycles(name: &str) -> Option<u64> {
    let base = base_name(name);
    Some(match base {
        "fabs" | "copysign" | "fmin" | "fmax" | "fminnum" | "fmaxnum" | "minnum" | "maxnum" => 1,
        "floor" | "ceil" | "trunc" | "round" | "rint" | "nearbyint" | "roundeven" => 2,
        "fdim" => 2,
        "sqrt" => 20,
        "cbrt" | "fmod" | "hypot" => 30,
        "exp" | "exp2" | "exp10" | "expm1" | "log" | "log2" | "log10" | "log1p" => 40,
        "sin" | "cos" | "tan" | "tanh" | "sinh" | "cosh" | "atan" | "asin" | "acos" => 50,
        "erf" | "erfc" | "atan2" => 60,
        "pow" | "lgamma" | "tgamma" => 100,
        _ => return None,
    })
}

/// `expf` -> `exp`, `llvm.exp.f64` -> `exp`, libdevice's `__nv_expf` -> `exp`;
/// `__adc_powi_f64` is not libm.
fn base_name(name: &str) -> &str {
    let name = name.strip_prefix("__nv_").unwrap_or(name);
    if let Some(intrinsic) = name.strip_prefix("llvm.") {
        return intrinsic.split('.').next().unwrap_or(intrinsic);
    }
    if libm_table_has(name) {
        return name;
    }
    let single = name.strip_suffix('f').or_else(|| name.strip_suffix('l'));
    single.filter(|b| libm_table_has(b)).unwrap_or(name)
}

fn libm_table_has(name: &str) -> bool {
    matches!(
        name,
        "fabs"
            | "copysign"
            | "fmin"
            | "fmax"
            | "floor"
            | "ceil"
            | "trunc"
            | "round"
            | "rint"
            | "nearbyint"
            | "fdim"
            | "sqrt"
            | "cbrt"
            | "fmod"
            | "hypot"
            | "exp"
            | "exp2"
            | "exp10"
            | "expm1"
            | "log"
            | "log2"
            | "log10"
            | "log1p"
            | "sin"
            | "cos"
            | "tan"
            | "tanh"
            | "sinh"
            | "cosh"
            | "atan"
            | "asin"
            | "acos"
            | "erf"
            | "erfc"
            | "atan2"
            | "pow"
            | "lgamma"
            | "tgamma"
    )
}

/// The recompute cost of `data` when it calls a declared (not defined) pure libm
/// function with float arguments only: its result depends on its arguments alone (libm
/// may set `errno`, which the forward pass set the same way already).
pub fn pure_libm_call(module: &Module, data: &InstructionData) -> Option<u64> {
    let InstructionData::Call { callee, .. } = data else { return None };
    let callee = module.functions.get(*callee)?;
    if !callee.is_declaration() {
        return None;
    }
    let sig = &callee.signature;
    let floats = sig.params.iter().chain(sig.ret.iter()).all(|t| t.is_float());
    if !floats || sig.ret.is_none() {
        return None;
    }
    libm_cycles(&callee.name)
}

/// The model's decision for a pure libm call whose result has `bytes` bytes: `Some(true)`
/// recompute, `Some(false)` store, `None` not a pure libm call.
///
/// GPU code recomputes every pure libm call: its tapes live in local memory, which is
/// device memory reserved for every thread the GPU can hold resident, so a stored value
/// costs memory traffic and footprint across the whole launch, while arithmetic is cheap.
pub fn recompute_libm(module: &Module, data: &InstructionData, bytes: u64) -> Option<bool> {
    let gpu = module.target.as_deref().is_some_and(|t| t.starts_with("nvptx"));
    pure_libm_call(module, data).map(|cycles| gpu || cycles <= bytes * STORE_CYCLES_PER_BYTE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_decisions() {
        assert_eq!(libm_cycles("fabsf"), Some(1));
        assert_eq!(libm_cycles("llvm.exp.f64"), Some(40));
        assert_eq!(libm_cycles("pow"), Some(100));
        assert_eq!(libm_cycles("powi"), None);
        assert_eq!(libm_cycles("malloc"), None);
        assert_eq!(libm_cycles("__nv_sqrt"), libm_cycles("sqrt"));
        assert_eq!(libm_cycles("__nv_expf"), libm_cycles("exp"));
        assert_eq!(libm_cycles("__nv_fast_expf"), None);
        // f64: 32 cycles to store; sqrt recomputed, exp stored.
        assert!(libm_cycles("sqrt").unwrap() <= 8 * STORE_CYCLES_PER_BYTE);
        assert!(libm_cycles("exp").unwrap() > 8 * STORE_CYCLES_PER_BYTE);
    }
}
