//! What to differentiate: one [`DiffRequest`] per distinct `__enzyme_*` call shape.
//!
//! The derivative function's signature is fixed here so that the API lowering and the
//! synthesis agree without knowing each other:
//!
//! - Reverse mode parameters: for each primal parameter in order, the primal value, then
//!   its shadow when the argument is `Dup` or `DupNoNeed` (same type as the primal: a
//!   pointer whose pointee receives `+=` accumulated adjoints).
//! - Reverse mode return: the adjoints of the `Active` arguments in argument order: none
//!   is `void`, one is that float type, several are a struct of them. An `Active` return
//!   is seeded with 1.0 inside the derivative (Enzyme's `__enzyme_autodiff`).
//! - Forward mode parameters: as reverse mode, but `Dup` arguments of scalar float type
//!   carry a tangent too, and with `width` N every `Dup` argument is followed by N
//!   shadows; the return is the tangent of the primal result (a struct of N tangents for
//!   N > 1), or a struct `{primal, tangent...}` when `RetActivity::Dup`.

use std::fmt;

use adc_ir::{FuncId, Type};

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum DiffMode {
    Reverse,
    Forward,
}

/// How one argument of the differentiated function takes part.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ArgActivity {
    /// No derivative flows through it (`enzyme_const`, and integers by default).
    Const,
    /// A float scalar (or vector/aggregate of floats) whose adjoint is returned
    /// (`enzyme_out`, and floats by default).
    Active,
    /// A pointer with a shadow pointer passed after it (`enzyme_dup`, pointers by default).
    Dup,
    /// As `Dup`, but the primal memory's final contents are not needed by the caller
    /// (`enzyme_dupnoneed`): stores that only serve the caller may be skipped.
    DupNoNeed,
}

impl ArgActivity {
    pub fn has_shadow(self) -> bool {
        matches!(self, ArgActivity::Dup | ArgActivity::DupNoNeed)
    }
}

/// How the primal result takes part.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum RetActivity {
    /// Void, non-float, or not differentiated: no seed.
    Const,
    /// A float result seeded with 1.0 (reverse) or whose tangent is returned (forward).
    Active,
    /// Forward mode only: return both the primal result and its tangent.
    Dup,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct DiffRequest {
    pub function: FuncId,
    pub mode: DiffMode,
    /// One entry per parameter of `function`, in order.
    pub args: Vec<ArgActivity>,
    pub ret: RetActivity,
    /// Vector forward mode width (`enzyme_width`); 1 otherwise.
    pub width: u32,
}

impl DiffRequest {
    pub fn reverse(function: FuncId, args: Vec<ArgActivity>, ret: RetActivity) -> DiffRequest {
        DiffRequest { function, mode: DiffMode::Reverse, args, ret, width: 1 }
    }
}

impl fmt::Display for DiffRequest {
    /// `reverse(dup, const, active) -> active`: used in derivative names and messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            DiffMode::Reverse => "reverse",
            DiffMode::Forward => "forward",
        };
        let args: Vec<&str> = self
            .args
            .iter()
            .map(|a| match a {
                ArgActivity::Const => "const",
                ArgActivity::Active => "active",
                ArgActivity::Dup => "dup",
                ArgActivity::DupNoNeed => "dupnoneed",
            })
            .collect();
        let ret = match self.ret {
            RetActivity::Const => "const",
            RetActivity::Active => "active",
            RetActivity::Dup => "dup",
        };
        write!(f, "{mode}({}) -> {ret}", args.join(", "))?;
        if self.width != 1 {
            write!(f, " width {}", self.width)?;
        }
        Ok(())
    }
}

/// A split function (both halves of a reverse-mode derivative, selected by a phase flag;
/// see `crate::reverse::calls`) and the byte size of its frame, the tape of split mode.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct SplitFunction {
    pub id: FuncId,
    pub frame_bytes: u64,
}

/// Where GPU derivatives keep the tapes whose size is not a compile-time constant (a
/// trip count read on entry, or a loop that decides when to stop).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DeviceTapeSpace {
    /// A region of this many bytes of each thread's local memory, bump-allocated; a
    /// thread whose tapes need more stops the launch with a trap. The driver reserves
    /// local memory for every resident thread, so the size costs device memory, not time.
    Local(u64),
    /// The device heap (`malloc`, bounded by `cudaLimitMallocHeapSize`, 8 MB by default):
    /// any size, but one allocator call per tape and thread, which serializes threads.
    Heap,
}

impl DeviceTapeSpace {
    /// The default local region per thread.
    pub const DEFAULT_LOCAL_BYTES: u64 = 4096;

    /// Parses `local`, `local=BYTES` or `heap` (the `--gpu-tapes` values).
    pub fn parse(text: &str) -> Result<DeviceTapeSpace, String> {
        match text.split_once('=') {
            None if text == "heap" => Ok(DeviceTapeSpace::Heap),
            None if text == "local" => Ok(DeviceTapeSpace::default()),
            Some(("local", bytes)) => match bytes.parse::<u64>() {
                Ok(b) if (16..=512 * 1024).contains(&b) => Ok(DeviceTapeSpace::Local(b)),
                _ => Err(format!(
                    "`{text}`: the local tape region takes 16 to 524288 bytes (PTX allows \
                     512 KiB of local memory per thread)"
                )),
            },
            _ => Err(format!("`{text}`: expected `local`, `local=BYTES` or `heap`")),
        }
    }
}

impl Default for DeviceTapeSpace {
    fn default() -> Self {
        DeviceTapeSpace::Local(Self::DEFAULT_LOCAL_BYTES)
    }
}

/// Produces the derivative function of a request inside `module` (memoised by the
/// implementor) and returns its id. The API lowering is written against this trait, so it
/// does not depend on how synthesis works.
pub trait Synthesize {
    fn derivative(
        &mut self,
        module: &mut adc_ir::Module,
        request: &DiffRequest,
    ) -> Result<FuncId, crate::AdError>;

    /// The derivative of a request that another request differentiates again (a higher
    /// derivative): synthesizers may lay it out for that; by default the same as
    /// [`Self::derivative`].
    fn derivative_to_differentiate_again(
        &mut self,
        module: &mut adc_ir::Module,
        request: &DiffRequest,
    ) -> Result<FuncId, crate::AdError> {
        self.derivative(module, request)
    }

    /// Where GPU derivatives keep tapes of run-time size.
    fn device_tape_space(&self) -> DeviceTapeSpace {
        DeviceTapeSpace::default()
    }

    /// The split function of a reverse-mode request (`__enzyme_augmentfwd` and
    /// `__enzyme_reverse`). Synthesizers that only produce whole derivatives refuse it.
    fn split_function(
        &mut self,
        module: &mut adc_ir::Module,
        request: &DiffRequest,
    ) -> Result<SplitFunction, crate::AdError> {
        let name = module.functions.get(request.function).map_or("?", |f| f.name.as_str());
        Err(crate::AdError::new(
            crate::Site::function(name),
            crate::AdErrorKind::Unsupported {
                what: format!("{request} in split mode with this synthesizer"),
            },
        ))
    }
}

/// Float scalars and vectors of them: what can be active by value.
pub(crate) fn is_float_like(ty: &Type) -> bool {
    ty.lane_type().is_float()
}

/// Whether a type holds a float anywhere (scalar, lane, field or element).
pub(crate) fn has_float(ty: &Type) -> bool {
    match ty {
        Type::F32 | Type::F64 => true,
        Type::Vector(elem, _) | Type::Array(elem, _) => has_float(elem),
        Type::Struct(s) => s.fields.iter().any(has_float),
        _ => false,
    }
}

/// Whether a type holds a pointer anywhere.
pub(crate) fn has_pointer(ty: &Type) -> bool {
    match ty {
        Type::Ptr(_) => true,
        Type::Vector(elem, _) | Type::Array(elem, _) => has_pointer(elem),
        Type::Struct(s) => s.fields.iter().any(has_pointer),
        _ => false,
    }
}

/// Whether values of this type may carry a float's bits as an integer (a `double` passed
/// or returned as its `i64` bits at -O2): such an argument or result takes part in a
/// derivative with its adjoint or tangent as bits of the same type.
pub(crate) fn may_carry_float_bits(ty: &Type) -> bool {
    ty.lane_type().is_int() && *ty.lane_type() != Type::I1
}

/// Whether values of this type have a tangent (floats) or a shadow (pointers) that must
/// not be lost.
pub(crate) fn carries_derivative(ty: &Type) -> bool {
    ty.is_ptr() || has_float(ty)
}
