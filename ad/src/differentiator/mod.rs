//! `Differentiator`: the entry point of derivative synthesis. It implements
//! [`Synthesize`] for the Enzyme API lowering, memoises derivatives per request, declares
//! the runtime functions the derivative calls (`malloc`, `realloc`, `free`, the tape
//! helper), runs reverse-mode synthesis (`crate::reverse`) and verifies the result before
//! adding it to the module. Forward requests go to `crate::forward::synthesize_forward_with`
//! (with this memo, so that forward callee derivatives are shared across requests).
//!
//! Derivatives are named `__adc_reverse_<function>` (`__adc_forward_<function>`), with `.1`, `.2`, ... appended for
//! further distinct requests on the same function, and have internal linkage.
//!
//! Calls to defined functions inside a derivative go through split functions
//! (`__adc_split_<callee>`, see `crate::reverse`), memoised per (callee, activity) across
//! all requests. A synthesis reserves the ids of the split functions it calls (past the
//! end of the module); the differentiator then adds them in order as declarations and
//! synthesizes their bodies from a worklist, each of which may reserve more. This is what
//! makes recursion work: a split function's id exists before its body is built. Callees
//! called in combined mode (`crate::reverse`) are reserved the same way but get a plain
//! reverse derivative, memoised with the top-level ones.

mod custom_wrapper;

use std::collections::{HashMap, VecDeque};

use adc_ir::{FuncAttrs, FuncId, Function, Module, Signature, Type};

use crate::activity::{ModuleFacts, RequestAnalyses};
use crate::cache::CacheStats;
use crate::callees::{fresh_name, SignatureCache};
use crate::error::{AdError, AdErrorKind, Site};
use crate::request::{DiffMode, DiffRequest, SplitFunction, Synthesize};
use crate::reverse::{
    add_tape_slots, define_tape_push, define_tape_reuse, synthesize, Reserved, Runtime,
    SplitLayout, SplitRegistry, SynthEnv,
};
use crate::rules::{self, Differentiable};
use crate::typetree::TypeAnalysis;

/// Choices that change what synthesis produces.
#[derive(Clone, Debug)]
pub struct DifferentiatorOptions {
    /// Verify every synthesized function (`adc_ir::verify_function`); a failure is an
    /// internal error reported as `AdErrorKind::Unsupported` with the verifier's message.
    pub verify: bool,
    /// Cache-planner switches (ablations).
    pub cache: crate::cache::CacheOptions,
    /// Forward-mode switches (ablations).
    pub forward: crate::forward::ForwardOptions,
    /// Where GPU derivatives keep tapes of run-time size (`--gpu-tapes`).
    pub device_tapes: crate::request::DeviceTapeSpace,
}

impl Default for DifferentiatorOptions {
    fn default() -> Self {
        DifferentiatorOptions {
            verify: true,
            cache: Default::default(),
            forward: Default::default(),
            device_tapes: Default::default(),
        }
    }
}

/// Synthesizes derivatives on request, once per distinct request.
#[derive(Debug, Default)]
pub struct Differentiator {
    pub options: DifferentiatorOptions,
    memo: HashMap<DiffRequest, FuncId>,
    /// The analyses of each request, and what they keep across requests.
    pub analyses: RequestAnalyses,
    /// Every function's signature, kept across requests.
    signatures: SignatureCache,
    /// Split functions (augmented forward + reverse of callees) per callee request.
    split_memo: HashMap<DiffRequest, FuncId>,
    /// Cache statistics of every derivative synthesized so far, by its name.
    pub stats: Vec<(String, CacheStats)>,
    /// Frame (split-mode tape) size of every split function synthesized so far.
    frame_bytes: HashMap<FuncId, u64>,
}

impl Differentiator {
    pub fn new(options: DifferentiatorOptions) -> Differentiator {
        Differentiator {
            options,
            memo: HashMap::new(),
            analyses: RequestAnalyses::default(),
            signatures: SignatureCache::default(),
            split_memo: HashMap::new(),
            stats: Vec::new(),
            frame_bytes: HashMap::new(),
        }
    }
}

/// The function `request` names, or an error when the module has none of that id.
fn requested_function<'m>(
    module: &'m Module,
    request: &DiffRequest,
) -> Result<&'m Function, AdError> {
    module.functions.get(request.function).ok_or_else(|| {
        AdError::new(
            Site::function("?"),
            AdErrorKind::Unsupported {
                what: format!("a request for unknown function {}", request.function),
            },
        )
    })
}

impl Synthesize for Differentiator {
    fn device_tape_space(&self) -> crate::request::DeviceTapeSpace {
        self.options.device_tapes
    }

    /// With tapes by kind (`CacheOptions::tapes_by_kind`), which the next level's
    /// analyses can tell apart. Derivatives are memoised per request, so a request met
    /// first outside a nest keeps its shared records when it is met again inside one
    /// (still correct, only without the separation), and the other way round.
    fn derivative_to_differentiate_again(
        &mut self,
        module: &mut Module,
        request: &DiffRequest,
    ) -> Result<FuncId, AdError> {
        let options = self.options.cache;
        self.options.cache.tapes_by_kind = true;
        let derivative = self.derivative(module, request);
        self.options.cache = options;
        derivative
    }

    fn derivative(
        &mut self,
        module: &mut Module,
        request: &DiffRequest,
    ) -> Result<FuncId, AdError> {
        if let Some(id) = self.memo.get(request) {
            return Ok(*id);
        }
        let primal = requested_function(module, request)?;
        let primal_name = primal.name.clone();
        // A registered custom derivative replaces synthesis (`crate::custom`).
        let prefix = match request.mode {
            DiffMode::Reverse => "__adc_reverse_",
            DiffMode::Forward => "__adc_forward_",
        };
        let name = fresh_name(module, &format!("{prefix}{primal_name}"));
        if let Some(id) = custom_wrapper::top_level_wrapper(module, request, &name)? {
            self.memo.insert(request.clone(), id);
            return Ok(id);
        }
        if request.mode == DiffMode::Forward {
            // Forward synthesis declares its own libm callees and verifies its result.
            // Callee derivatives are memoised next to the API requests.
            return crate::forward::synthesize_forward_with(
                module,
                request,
                &name,
                &mut self.memo,
                &mut self.analyses,
                self.options.forward,
            );
        }
        let runtime = declare_runtime(module, &primal_name, self.options.cache.tape_reuse)?;
        declare_rule_externs(module, request.function, &primal_name)?;
        declare_shadow_globals(module, request.function);
        self.signatures.refresh(module);
        let (types, facts) = self.analyses.analyze(module, request.function)?;
        // The derivative takes the next id; the split functions it calls follow it.
        let mut splits = self.lend_memos(module.functions.len() + 1);
        let synthesized = synthesize(
            module,
            request,
            &name,
            &SynthEnv {
                runtime,
                cache: self.options.cache,
                signatures: self.signatures.current(),
                types: &types,
                facts: &facts,
            },
            &mut splits,
            false,
        );
        let pending = self.take_back_memos(splits, synthesized.is_ok());
        let (function, stats) = synthesized?;
        add_tape_slots(module, &name, stats.tape_slots);
        let mut queue = VecDeque::new();
        let id = module.add_function(function);
        self.add_pending_splits(module, pending, &mut queue);
        self.verify(module, id, request, &primal_name)?;
        self.memo.insert(request.clone(), id);
        self.stats.push((name, stats));
        let splits = self.synthesize_splits(module, runtime, queue, &types, &facts);
        self.analyses.record_activity(&facts);
        splits?;
        Ok(id)
    }

    fn split_function(
        &mut self,
        module: &mut Module,
        request: &DiffRequest,
    ) -> Result<SplitFunction, AdError> {
        let frame = |d: &Differentiator, id: FuncId| -> Result<SplitFunction, AdError> {
            let frame_bytes = d.frame_bytes.get(&id).copied().ok_or_else(|| {
                AdError::new(
                    Site::function(&format!("{id}")),
                    AdErrorKind::Internal { what: "a split function without a frame size".into() },
                )
            })?;
            Ok(SplitFunction { id, frame_bytes })
        };
        if let Some(&id) = self.split_memo.get(request) {
            return frame(self, id);
        }
        let primal = requested_function(module, request)?;
        let primal_name = primal.name.clone();
        // A function differentiated by a registered gradient or library rule has no body
        // of its own to split: split the call of it instead (a wrapper), whose synthesis
        // uses the registration.
        let registrations = crate::custom::Registrations::read(module)?;
        if registrations.gradient(request.function).is_some()
            || registrations.like(request.function).is_some()
        {
            let name = fresh_name(module, &format!("__adc_call_{primal_name}"));
            let wrapper = custom_wrapper::call_wrapper(module, request.function, &name);
            let wrapped = DiffRequest { function: wrapper, ..request.clone() };
            let split = self.split_function(module, &wrapped)?;
            self.split_memo.insert(request.clone(), split.id);
            return Ok(split);
        }
        let layout = SplitLayout::new(&primal.signature, request);
        let signature = layout.signature(&primal.signature, &request.args);
        let runtime = declare_runtime(module, &primal_name, self.options.cache.tape_reuse)?;
        declare_shadow_globals(module, request.function);
        let (types, facts) = self.analyses.analyze(module, request.function)?;
        let mut splits = self.lend_memos(module.functions.len());
        let id = splits.id_for(request, signature);
        let pending = self.take_back_memos(splits, true);
        let mut queue = VecDeque::new();
        self.add_pending_splits(module, pending, &mut queue);
        let splits = self.synthesize_splits(module, runtime, queue, &types, &facts);
        self.analyses.record_activity(&facts);
        splits?;
        frame(self, id)
    }
}

impl Differentiator {
    /// A registry holding the memos for one synthesis (moved in, not copied: a copy per
    /// request made N requests cost O(N²)); [`Self::take_back_memos`] returns them.
    fn lend_memos(&mut self, next_id: usize) -> SplitRegistry {
        let split_memo = std::mem::take(&mut self.split_memo);
        SplitRegistry::new(split_memo, std::mem::take(&mut self.memo), next_id)
    }

    /// Takes the memos back from `splits` and returns its reservations; when the
    /// synthesis failed, the reservations (which no function will fill) are dropped from
    /// the memos, which are then as they were before it.
    fn take_back_memos(&mut self, splits: SplitRegistry, succeeded: bool) -> Vec<Reserved> {
        let SplitRegistry { mut known, mut known_combined, pending, .. } = splits;
        if !succeeded {
            for reserved in &pending {
                let memo = if reserved.combined { &mut known_combined } else { &mut known };
                memo.remove(&reserved.request);
            }
        }
        self.split_memo = known;
        self.memo = known_combined;
        pending
    }

    /// Adds the split functions a synthesis reserved, as declarations (their bodies
    /// follow), in id order, and queues them.
    fn add_pending_splits(
        &mut self,
        module: &mut Module,
        pending: Vec<Reserved>,
        queue: &mut VecDeque<Reserved>,
    ) {
        for reserved in pending {
            let callee = module.functions[reserved.request.function].name.clone();
            let prefix = if reserved.combined { "__adc_reverse_" } else { "__adc_split_" };
            let name = fresh_name(module, &format!("{prefix}{callee}"));
            let mut placeholder = Function::new(&name, reserved.signature.clone());
            placeholder.linkage = adc_ir::Linkage::Internal;
            let added = module.add_function(placeholder);
            debug_assert_eq!(added, reserved.id, "split functions are added in reservation order");
            let memo = if reserved.combined { &mut self.memo } else { &mut self.split_memo };
            memo.insert(reserved.request.clone(), reserved.id);
            queue.push_back(reserved);
        }
    }

    /// Synthesizes the bodies of queued split functions (and of those they call).
    fn synthesize_splits(
        &mut self,
        module: &mut Module,
        runtime: Runtime,
        mut queue: VecDeque<Reserved>,
        types: &TypeAnalysis,
        facts: &ModuleFacts,
    ) -> Result<(), AdError> {
        while let Some(Reserved { request, id, combined, .. }) = queue.pop_front() {
            let callee = module.functions[request.function].name.clone();
            declare_rule_externs(module, request.function, &callee)?;
            self.signatures.refresh(module);
            let name = module.functions[id].name.clone();
            let mut splits = self.lend_memos(module.functions.len());
            let synthesized = synthesize(
                module,
                &request,
                &name,
                &SynthEnv {
                    runtime,
                    cache: self.options.cache,
                    signatures: self.signatures.current(),
                    types,
                    facts,
                },
                &mut splits,
                !combined,
            );
            let pending = self.take_back_memos(splits, synthesized.is_ok());
            let (mut function, stats) = synthesized?;
            add_tape_slots(module, &name, stats.tape_slots);
            self.add_pending_splits(module, pending, &mut queue);
            function.linkage = adc_ir::Linkage::Internal;
            module.functions[id] = function;
            self.verify(module, id, &request, &callee)?;
            self.frame_bytes.insert(id, stats.frame_bytes);
            self.stats.push((name, stats));
        }
        Ok(())
    }

    fn verify(
        &self,
        module: &Module,
        id: FuncId,
        request: &DiffRequest,
        primal_name: &str,
    ) -> Result<(), AdError> {
        if !self.options.verify {
            return Ok(());
        }
        let function = &module.functions[id];
        if let Err(diagnostics) = adc_ir::verify::verify_function(module, function) {
            let text = adc_ir::text::print_function(module, function);
            return Err(AdError::new(
                Site::function(primal_name),
                AdErrorKind::Unsupported {
                    what: format!(
                        "{request}: internal error, the synthesized function @{} does not verify: {diagnostics}\n{text}",
                        function.name
                    ),
                },
            ));
        }
        Ok(())
    }
}

/// Finds or declares a library function with the expected signature.
fn declare(
    module: &mut Module,
    name: &str,
    sig: Signature,
    for_function: &str,
) -> Result<FuncId, AdError> {
    if let Some(id) = module.function_by_name(name) {
        let existing = &module.functions[id].signature;
        if existing.params != sig.params || existing.ret != sig.ret {
            return Err(AdError::new(
                Site::function(for_function),
                AdErrorKind::Unsupported {
                    what: format!("a module whose @{name} does not have the C library's signature"),
                },
            ));
        }
        return Ok(id);
    }
    let mut f = Function::new(name, sig);
    f.attrs = FuncAttrs::NOUNWIND;
    Ok(module.add_function(f))
}

/// The library functions and helpers synthesized code calls; the tape-reuse helpers only
/// with `tape_reuse` on and not for GPU modules (`crate::reverse::tape_reuse`), the frame
/// arena not for GPU modules (`crate::reverse::arena`).
fn declare_runtime(
    module: &mut Module,
    for_function: &str,
    tape_reuse: bool,
) -> Result<Runtime, AdError> {
    let malloc =
        declare(module, "malloc", Signature::new(vec![Type::I64], Some(Type::PTR)), for_function)?;
    let realloc = declare(
        module,
        "realloc",
        Signature::new(vec![Type::PTR, Type::I64], Some(Type::PTR)),
        for_function,
    )?;
    let free = declare(module, "free", Signature::new(vec![Type::PTR], None), for_function)?;
    let tape_push = define_tape_push(module, realloc);
    // GPU modules: shadows of shared arrays and the intrinsics GPU adjoints call (for
    // whole derivatives and split functions alike).
    crate::reverse::gpu::declare_gpu_runtime(module);
    let cpu = !crate::reverse::gpu::is_nvptx(module);
    let keep = tape_reuse && cpu;
    let arena = cpu.then(|| crate::reverse::define_frame_arena(module, malloc, free, keep));
    let tape_reuse = keep.then(|| define_tape_reuse(module, malloc, free));
    let (tape_alloc, tape_free) = if cpu {
        (malloc, free)
    } else {
        use crate::reverse::gpu_tapes::{DEVICE_ALLOC, DEVICE_FREE};
        let alloc = Signature::new(vec![Type::I64], Some(Type::PTR));
        let release = Signature::new(vec![Type::PTR], None);
        (
            declare(module, DEVICE_ALLOC, alloc, for_function)?,
            declare(module, DEVICE_FREE, release, for_function)?,
        )
    };
    Ok(Runtime { malloc, free, tape_alloc, tape_free, tape_push, tape_reuse, arena })
}

/// Adds a zero-initialised internal shadow global `__adc_shadow_<name>` (once) for every
/// global that the activity analysis shadows (`crate::activity::shadowed_globals`) and
/// that `function` or a function it calls, directly or not, names.
fn declare_shadow_globals(module: &mut Module, function: FuncId) {
    for global in crate::activity::shadowed_globals_reached(module, function) {
        let primal = &module.globals[global];
        let name = format!("{}{}", crate::activity::SHADOW_GLOBAL_PREFIX, primal.name);
        if module.global_by_name(&name).is_some() {
            continue;
        }
        let shadow = adc_ir::Global {
            name,
            ty: primal.ty.clone(),
            linkage: adc_ir::Linkage::Internal,
            constant: false,
            align: primal.align,
            addr_space: primal.addr_space,
            init: Some(adc_ir::Constant::Zero),
        };
        module.add_global(shadow);
    }
}

/// Declares the libm functions the derivative rules of the primal's operations call.
fn declare_rule_externs(
    module: &mut Module,
    function: FuncId,
    for_function: &str,
) -> Result<(), AdError> {
    use adc_ir::InstructionData as I;
    let registrations = crate::custom::Registrations::read(module)?;
    let primal = &module.functions[function];
    let mut needed = Vec::new();
    // Calls to `__enzyme_function_like` functions use their library function's rule.
    for (_, inst) in primal.layout.insts() {
        let (I::Call { callee, .. }, Some(result)) =
            (&primal.dfg.insts[inst], primal.dfg.inst_result(inst))
        else {
            continue;
        };
        if let Some(library) = registrations.like(*callee) {
            let ty = primal.dfg.value_type(result).clone();
            if let Ok(externs) = rules::externs_needed(Differentiable::Call(library), &ty) {
                needed.extend(externs);
            }
        }
    }
    for (_, inst) in primal.layout.insts() {
        let Some(result) = primal.dfg.inst_result(inst) else { continue };
        let ty = primal.dfg.value_type(result).clone();
        if !crate::request::has_float(&ty) {
            continue;
        }
        let op = match &primal.dfg.insts[inst] {
            I::Unary { op, .. } => Differentiable::Unary(*op),
            I::Binary { op, .. } => Differentiable::Binary(*op),
            I::Fma { .. } => Differentiable::Fma,
            I::Cast { op, .. } => Differentiable::Cast(*op),
            I::Call { callee, .. } if module.functions[*callee].is_declaration() => {
                Differentiable::Call(&module.functions[*callee].name)
            }
            _ => continue,
        };
        // An operation without a rule is reported by synthesis, at its instruction.
        if let Ok(externs) = rules::externs_needed(op, &ty) {
            needed.extend(externs);
        }
    }
    for (name, sig) in needed {
        declare(module, name, sig, for_function)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use adc_ir::interp::{Interpreter, Val};
    use adc_ir::text::parse_module;
    use adc_ir::Linkage;

    use super::*;
    use crate::request::{ArgActivity, RetActivity};

    const SQUARE_LOOP: &str = "
func @f(%x: f64, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %one = const f64 1.0
  %four = const i64 4
  jump ^loop(%zero, %one)
^loop(%i: i64, %acc: f64):
  %more = icmp slt i64 %i, %four
  brif %more, ^body, ^done
^body:
  %acc1 = fmul f64 %acc, %x
  %inc = const i64 1
  %i1 = add nsw i64 %i, %inc
  jump ^loop(%i1, %acc1)
^done:
  ret %acc
}
";

    fn request(module: &Module, args: Vec<ArgActivity>) -> DiffRequest {
        DiffRequest::reverse(module.function_by_name("f").unwrap(), args, RetActivity::Active)
    }

    #[test]
    fn derivative_is_memoised_named_and_internal() {
        let mut module = parse_module(SQUARE_LOOP).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Active, ArgActivity::Const]);
        let first = d.derivative(&mut module, &req).unwrap();
        let again = d.derivative(&mut module, &req).unwrap();
        assert_eq!(first, again);
        assert_eq!(module.functions[first].name, "__adc_reverse_f");
        assert_eq!(module.functions[first].linkage, Linkage::Internal);
        let other = DiffRequest::reverse(req.function, req.args.clone(), RetActivity::Const);
        let second = d.derivative(&mut module, &other).unwrap();
        assert_ne!(first, second);
        assert_eq!(module.functions[second].name, "__adc_reverse_f.1");
        adc_ir::verify::verify_module(&module).unwrap();
    }

    #[test]
    fn derivative_of_x_to_the_fourth() {
        let mut module = parse_module(SQUARE_LOOP).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Active, ArgActivity::Const]);
        let id = d.derivative(&mut module, &req).unwrap();
        // The loop has a constant trip count: its tape is allocated once, up front.
        let stats = &d.stats[0].1;
        assert!(stats.tapes >= 1 && stats.presized_tapes == stats.tapes, "{stats:?}");
        let mut interp = Interpreter::new(&module).unwrap();
        let result = interp.call(id, &[Val::F64(1.5), Val::Int(0)]).unwrap();
        assert_eq!(result, Some(Val::F64(4.0 * 1.5 * 1.5 * 1.5)));
    }

    #[test]
    fn unwritten_loads_are_recomputed_not_taped() {
        let text = "
func @f(%x: ptr, %n: i64) -> f64 {
^entry:
  %zero = const i64 0
  %acc0 = const f64 0.0
  jump ^loop(%zero, %acc0)
^loop(%i: i64, %acc: f64):
  %more = icmp slt i64 %i, %n
  brif %more, ^body, ^done
^body:
  %eight = const i64 8
  %off = mul i64 %i, %eight
  %p = ptradd ptr %x, %off
  %xi = load f64, %p, align 8
  %sq = fmul f64 %xi, %xi
  %acc1 = fadd f64 %acc, %sq
  %inc = const i64 1
  %i1 = add i64 %i, %inc
  jump ^loop(%i1, %acc1)
^done:
  ret %acc
}
";
        let module = parse_module(text).unwrap();
        let req = request(&module, vec![ArgActivity::Dup, ArgActivity::Const]);
        // `%xi` is loaded again from `%x`, and the induction variable is counted down in
        // the reverse loop: nothing is taped.
        let mut d = Differentiator::default();
        d.derivative(&mut module.clone(), &req).unwrap();
        let stats = &d.stats[0].1;
        assert_eq!((stats.tapes, stats.counted_ivs), (0, 1), "{stats:?}");
        // Without IV counting (`-cache-ivs`) only the induction variable is taped; the
        // trip count `max(0, %n)` is known on entry, so its tape is allocated up front.
        let cache = crate::cache::CacheOptions { loop_ivs: false, ..Default::default() };
        let mut d = Differentiator::new(DifferentiatorOptions { cache, ..Default::default() });
        d.derivative(&mut module.clone(), &req).unwrap();
        let stats = &d.stats[0].1;
        assert_eq!(stats.tapes, 1, "{stats:?}");
        assert_eq!(stats.presized_tapes, 1, "{stats:?}");
    }

    #[test]
    fn a_function_that_never_returns_still_synthesizes() {
        let text = "
declare @abort()
func @f(%x: f64) -> f64 {
^entry:
  %y = fmul f64 %x, %x
  call @abort()
  unreachable
}
";
        let mut module = parse_module(text).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Active]);
        d.derivative(&mut module, &req).unwrap();
        adc_ir::verify::verify_module(&module).unwrap();
    }

    const MUTUAL: &str = "
func @even(%x: f64, %n: i64) -> f64 noinline {
^entry:
  %zero = const i64 0
  %done = icmp sle i64 %n, %zero
  brif %done, ^base, ^step
^base:
  ret %x
^step:
  %k = const i64 1
  %m = sub i64 %n, %k
  %o = call @odd(%x, %m)
  %r = fmul f64 %o, %x
  ret %r
}
func @odd(%x: f64, %n: i64) -> f64 noinline {
^entry:
  %k = const i64 1
  %m = sub i64 %n, %k
  %e = call @even(%x, %m)
  %r = fmul f64 %e, %x
  ret %r
}
func @f(%x: f64, %n: i64) -> f64 {
^entry:
  %a = call @even(%x, %n)
  %b = call @even(%a, %n)
  ret %b
}
";

    fn split_functions(module: &Module) -> Vec<String> {
        let mut names: Vec<String> = module
            .functions
            .values()
            .filter(|f| f.name.starts_with("__adc_split_"))
            .map(|f| f.name.clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn split_functions_are_memoised_per_callee_and_activity() {
        let mut module = parse_module(MUTUAL).unwrap();
        let mut d = Differentiator::default();
        let req = request(&module, vec![ArgActivity::Active, ArgActivity::Const]);
        let id = d.derivative(&mut module, &req).unwrap();
        // Two calls of @even with the same activity and the mutual recursion share one
        // split function per callee.
        assert_eq!(split_functions(&module), ["__adc_split_even", "__adc_split_odd"]);
        for name in split_functions(&module) {
            let f = &module.functions[module.function_by_name(&name).unwrap()];
            assert!(!f.is_declaration(), "{name} has a body");
            assert_eq!(f.linkage, Linkage::Internal);
        }
        // A second request reuses them.
        let other = DiffRequest::reverse(req.function, req.args.clone(), RetActivity::Const);
        d.derivative(&mut module, &other).unwrap();
        assert_eq!(split_functions(&module).len(), 2);
        adc_ir::verify::verify_module(&module).unwrap();
        // even(x, 3) = odd(x, 2)·x = even(x, 1)·x² = odd(x, 0)·x³ = x⁵, so f = x^25.
        let mut interp = Interpreter::new(&module).unwrap();
        let result = interp.call(id, &[Val::F64(1.1), Val::Int(3)]).unwrap();
        let Some(Val::F64(d)) = result else { panic!("{result:?}") };
        let expected = 25.0 * 1.1f64.powi(24);
        assert!((d - expected).abs() < 1e-9 * expected, "{d} vs {expected}");
    }

    #[test]
    fn an_unknown_external_inside_a_callee_is_reported_at_its_call_site() {
        let text = "
declare @mystery(f64) -> f64
func @g(%x: f64) -> f64 noinline {
^entry:
  %y = call @mystery(%x)
  ret %y
}
func @f(%x: f64) -> f64 {
^entry:
  %y = call @g(%x)
  ret %y
}
";
        let mut module = parse_module(text).unwrap();
        let mut d = Differentiator::default();
        let req = DiffRequest::reverse(
            module.function_by_name("f").unwrap(),
            vec![ArgActivity::Active],
            RetActivity::Active,
        );
        let err = d.derivative(&mut module, &req).unwrap_err().to_string();
        assert!(err.contains("in @g") && err.contains("@mystery"), "{err}");
    }

    #[test]
    fn bad_requests_are_errors() {
        let mut module = parse_module(SQUARE_LOOP).unwrap();
        let mut d = Differentiator::default();
        let wrong_arity = request(&module, vec![ArgActivity::Active]);
        let err = d.derivative(&mut module, &wrong_arity).unwrap_err();
        assert!(err.to_string().contains("argument activities"), "{err}");
        // An integer the type analysis proves an integer (here a trip count) has no
        // adjoint; integers that may hold a float's bits can be active.
        let text = SQUARE_LOOP.replace(
            "%more = icmp slt i64 %i, %four",
            "%limit = mul i64 %n, %four\n  %more = icmp slt i64 %i, %limit",
        );
        let mut counted = parse_module(&text).unwrap();
        let active_int = request(&counted, vec![ArgActivity::Active, ArgActivity::Active]);
        let err = d.derivative(&mut counted, &active_int).unwrap_err().to_string();
        assert!(err.contains("argument 1 of type i64 as active: it holds an integer"), "{err}");
        let mut forward = request(&module, vec![ArgActivity::Dup, ArgActivity::Const]);
        forward.mode = DiffMode::Forward;
        let id = d.derivative(&mut module, &forward).unwrap();
        assert_eq!(module.functions[id].name, "__adc_forward_f");
        assert_eq!(d.derivative(&mut module, &forward).unwrap(), id);
    }
}
