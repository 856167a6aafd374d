//! Invocations run natively: the module is compiled by the Cranelift JIT and the call goes
//! through a trampoline. Buffer arguments (`[f64 1.0, 2.0]`) live in real memory here.
//! What the program prints goes straight to the process's standard output (flushed after
//! the call), so `output == "..."` clauses are checked by the interpreter only.

use adc_backend::abi::{leaf_layout, leaf_types};
use adc_backend::Jit;
use adc_ir::interp::Val;
use adc_ir::{Module, StartupFunction, StartupKind, Type};

use crate::invocation::{
    format_buffer, format_val, literal_to_val, matches_expected, Clause, Expect, Invocation,
    Literal, Outcome,
};

unsafe extern "C" {
    fn fflush(stream: *mut std::ffi::c_void) -> i32;
}

/// Flattens a value into leaves (raw bits), in `abi::leaf_types` order.
fn push_leaves(val: &Val, out: &mut Vec<u128>) {
    match val {
        Val::Int(v) => out.push(*v),
        Val::F32(f) => out.push(u128::from(f.to_bits())),
        Val::F64(f) => out.push(u128::from(f.to_bits())),
        Val::Ptr(p) => out.push(u128::from(*p)),
        Val::Vector(items) | Val::Aggregate(items) => {
            for item in items {
                push_leaves(item, out);
            }
        }
    }
}

/// Rebuilds a value of type `ty` from leaves.
fn from_leaves(ty: &Type, leaves: &mut impl Iterator<Item = u128>) -> Result<Val, String> {
    let mut next = || leaves.next().ok_or("too few result values");
    Ok(match ty {
        Type::F32 => Val::F32(f32::from_bits(next()? as u32)),
        Type::F64 => Val::F64(f64::from_bits(next()? as u64)),
        Type::Ptr(_) => Val::Ptr(next()? as u64),
        Type::Vector(elem, n) => {
            Val::Vector((0..*n).map(|_| from_leaves(elem, leaves)).collect::<Result<_, _>>()?)
        }
        Type::Array(elem, n) => {
            Val::Aggregate((0..*n).map(|_| from_leaves(elem, leaves)).collect::<Result<_, _>>()?)
        }
        Type::Struct(s) => Val::Aggregate(
            s.fields.iter().map(|f| from_leaves(f, leaves)).collect::<Result<_, _>>()?,
        ),
        _ => Val::Int(next()?),
    })
}

/// Native memory holding `values` of type `elem` (16-byte aligned).
struct Buffer {
    words: Vec<u128>,
    elem: Type,
    len: usize,
}

impl Buffer {
    fn new(elem: &Type, values: &[Val]) -> Result<Buffer, String> {
        let size = (elem.size() as usize) * values.len();
        let mut words = vec![0u128; size.div_ceil(16).max(1)];
        let layout = leaf_layout(elem)?;
        let bytes = bytes_mut(&mut words);
        for (k, v) in values.iter().enumerate() {
            let mut leaves = Vec::new();
            push_leaves(v, &mut leaves);
            for ((offset, ty), bits) in layout.iter().zip(leaves) {
                let at = k * elem.size() as usize + *offset as usize;
                let n = ty.size() as usize;
                bytes[at..at + n].copy_from_slice(&bits.to_le_bytes()[..n]);
            }
        }
        Ok(Buffer { words, elem: elem.clone(), len: values.len() })
    }

    fn read(&mut self, elem: &Type, count: usize) -> Result<Vec<Val>, String> {
        let layout = leaf_layout(elem)?;
        let bytes = bytes_mut(&mut self.words);
        let mut out = Vec::new();
        for k in 0..count {
            let mut leaves = Vec::new();
            for (offset, ty) in &layout {
                let at = k * elem.size() as usize + *offset as usize;
                let n = ty.size() as usize;
                let mut raw = [0u8; 16];
                raw[..n].copy_from_slice(bytes.get(at..at + n).ok_or("read past the buffer")?);
                let mut bits = u128::from_le_bytes(raw);
                if *ty == Type::I1 {
                    bits &= 1;
                }
                leaves.push(bits);
            }
            out.push(from_leaves(elem, &mut leaves.into_iter())?);
        }
        Ok(out)
    }
}

fn bytes_mut(words: &mut [u128]) -> &mut [u8] {
    // SAFETY: u128 has no padding and every byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 16) }
}

impl Invocation {
    /// Runs the call through the JIT and checks the expected value and buffers.
    /// Invocations that expect an error are not run (native code would crash).
    pub fn evaluate_jit(&self, module: &Module) -> Result<Outcome, String> {
        let func = module
            .function_by_name(&self.function)
            .ok_or_else(|| format!("no function @{} in the module", self.function))?;
        let sig = module.functions[func].signature.clone();
        if self.args.len() != sig.params.len() {
            return Err(format!(
                "@{} takes {} arguments, the invocation passes {}",
                self.function,
                sig.params.len(),
                self.args.len()
            ));
        }
        // `ADC_SIMD=0` runs the native half of `run` filetests lane by lane.
        let options = adc_backend::BackendOptions::from_env()?;
        let mut jit = Jit::with_options(module, &options).map_err(|d| d.to_string())?;
        let mut buffers: Vec<(Option<String>, Buffer)> = Vec::new();
        let mut leaves = Vec::new();
        for (arg, ty) in self.args.iter().zip(&sig.params) {
            match (&arg.literal, ty) {
                (Literal::List { elem, items }, Type::Ptr(_)) => {
                    let elem = elem.clone().ok_or("a buffer argument needs an element type")?;
                    let vals: Vec<Val> =
                        items.iter().map(|l| literal_to_val(l, &elem)).collect::<Result<_, _>>()?;
                    let mut buffer = Buffer::new(&elem, &vals)?;
                    leaves.push(buffer.words.as_mut_ptr() as usize as u128);
                    buffers.push((arg.binding.clone(), buffer));
                }
                (literal, ty) => push_leaves(&literal_to_val(literal, ty)?, &mut leaves),
            }
        }
        // SAFETY: buffers outlive the call; the filetests' functions are UB-free where the
        // interpreter accepts them.
        // `main` runs as a program, as in the interpreter: constructors first (rising
        // priority), destructors after (falling priority, the last registered first).
        let is_program = self.function == "main";
        let startup = |kind: StartupKind| -> Vec<String> {
            let mut list: Vec<&StartupFunction> =
                module.startup.iter().filter(|s| is_program && s.kind == kind).collect();
            list.sort_by_key(|s| s.priority);
            list.iter().map(|s| module.functions[s.function].name.clone()).collect()
        };
        for constructor in startup(StartupKind::Constructor) {
            // SAFETY: constructors take nothing and return nothing.
            unsafe { jit.call(&constructor, &[]) }.map_err(|d| d.to_string())?;
        }
        let result = unsafe { jit.call(&self.function, &leaves) };
        for destructor in startup(StartupKind::Destructor).into_iter().rev() {
            // SAFETY: as for constructors.
            unsafe { jit.call(&destructor, &[]) }.map_err(|d| d.to_string())?;
        }
        unsafe { fflush(std::ptr::null_mut()) };
        let result = result.map_err(|d| d.to_string())?;
        let mut outcome = Outcome::default();
        if let Some(ty) = &sig.ret {
            let got = from_leaves(ty, &mut result.into_iter())?;
            if let Some(Expect::Value(expected)) = &self.expect {
                let want = literal_to_val(expected, ty)?;
                if !matches_expected(&got, &want) {
                    return Err(format!(
                        "JIT: expected {}, got {}",
                        format_val(&want, ty),
                        format_val(&got, ty)
                    ));
                }
            }
            outcome.result = Some(format_val(&got, ty));
        }
        for (name, buffer) in &mut buffers {
            let Some(name) = name else { continue };
            let (elem, len) = (buffer.elem.clone(), buffer.len);
            let values = buffer.read(&elem, len)?;
            outcome.buffers.push((name.clone(), format_buffer(&elem, &values)));
        }
        for clause in &self.clauses {
            if let Clause::Buffer { name, expected } = clause {
                let Literal::List { elem: want_elem, items } = expected else {
                    return Err(format!("${name} must be compared with a [T ...] list"));
                };
                let (_, buffer) = buffers
                    .iter_mut()
                    .find(|(n, _)| n.as_deref() == Some(name.as_str()))
                    .ok_or_else(|| format!("no buffer named ${name} in the arguments"))?;
                let elem = want_elem.clone().unwrap_or_else(|| buffer.elem.clone());
                let got = buffer.read(&elem, items.len())?;
                let want: Vec<Val> =
                    items.iter().map(|l| literal_to_val(l, &elem)).collect::<Result<_, _>>()?;
                if !got.iter().zip(&want).all(|(g, w)| matches_expected(g, w)) {
                    return Err(format!(
                        "JIT: ${name}: expected {}, got {}",
                        format_buffer(&elem, &want),
                        format_buffer(&elem, &got)
                    ));
                }
            }
        }
        let _ = leaf_types;
        Ok(outcome)
    }
}
