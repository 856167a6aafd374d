//! `adc build`: bitcode (or an .adir file) -> import -> the `pre-ad` pipeline -> Enzyme API
//! lowering with derivative synthesis -> the `post-ad` pipeline -> a Cranelift object
//! (or the final module as text).
//!
//! `--ad-before-opt` is the reference point of ablations (Enzyme's "AD before
//! optimization"): the API calls are lowered on the imported module, then both pipelines
//! run. Pass selection (see [`BuildOptions::pipelines`]): `--passes=-licm,+name` toggles
//! both pipelines, `--pipeline NAME` replaces the pre-AD one, and an explicit list
//! `--passes a,b,c` runs exactly those passes (before AD) and nothing else.
//!
//! Failures are [`BuildError`]s; AD errors render as `file:line:col: error: ...` from the
//! failing instruction's debug location (the input's name when it has none).

use std::fmt;
use std::path::Path;

use adc_ad::{lower_enzyme_calls, AdError, LoweringReport, Synthesize};
use adc_ir::text::print_module;
use adc_ir::verify::verify_module;
use adc_ir::{FuncAttrs, FuncId, InstructionData, Module, Signature, Type};
use adc_passes::{PassError, PassInfo};

use crate::pass_args::{report_text, PassArgs};
use crate::phases::PhaseTimes;

/// What `adc build` writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Emit {
    /// A relocatable object file (Cranelift).
    Object,
    /// The module after every stage, in adc's text form.
    Ir,
    /// PTX assembly for the given GPU architecture (the module is nvptx device code).
    Ptx(adc_ptx::Arch),
}

#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub pass_args: PassArgs,
    /// Lower the API calls and synthesize derivatives before any optimization.
    pub ad_before_opt: bool,
    pub emit: Emit,
    /// Cranelift settings of `Emit::Object` (`--no-simd`, `ADC_SIMD`).
    pub backend: adc_backend::BackendOptions,
    /// `--denormals=flush`: derivatives run with flush-to-zero and denormals-are-zero.
    pub flush_denormals: bool,
    /// API calls differentiate copies of their functions with constant function-pointer
    /// arguments bound (`specialize-args`, on unless `--passes=-specialize-args`).
    pub specialize_args: bool,
    /// Differentiate scalarized copies of vectorized functions (`scalarize-vectors`, on
    /// unless `--passes=-scalarize-vectors`).
    pub scalarize_vectors: bool,
    /// Reverse mode differentiates the scalar fallback of loops LLVM vectorized
    /// (`devectorize-loops`, on unless `--passes=-devectorize-loops`).
    pub devectorize_loops: bool,
}

/// Why a build failed.
#[derive(Debug)]
pub enum BuildError {
    /// A bad `--passes`/`--pipeline`/`--print-*` selection, or a failing pass.
    Passes(PassError),
    /// The Enzyme API lowering or synthesis rejected the program.
    Ad(AdError),
    /// A stage produced a module that does not verify (a compiler bug).
    Invalid { stage: &'static str, diagnostics: String },
    /// The backend could not compile the final module.
    Backend(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Passes(e) => write!(f, "error: {e}"),
            BuildError::Ad(e) => write!(f, "{}", render_ad_error(e, None)),
            BuildError::Invalid { stage, diagnostics } => write!(
                f,
                "error: the module does not verify after {stage} (a compiler bug):\n{diagnostics}"
            ),
            BuildError::Backend(message) => write!(f, "error: {message}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// `file:line:col: error: <what>` plus a note naming the function and instruction. Without
/// a debug location, `input` (or `<input>`) stands for the file.
pub fn render_ad_error(error: &AdError, input: Option<&Path>) -> String {
    let location = match (&error.site.source, input) {
        (Some(source), _) => source.clone(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => "<input>".to_string(),
    };
    let mut text =
        format!("{location}: error: {}\n  note: in @{}", error.kind, error.site.function);
    if let Some(inst) = &error.site.inst {
        text.push_str(&format!(", at `{inst}`"));
    }
    text
}

/// What a successful build produced.
#[derive(Debug, Default)]
pub struct BuildOutput {
    /// The object file, or the module's text for [`Emit::Ir`].
    pub bytes: Vec<u8>,
    /// Pass-manager output for standard error (printers, dumps, timings, JSON lines).
    pub diagnostics: String,
    pub lowering: LoweringReport,
    /// Wall-clock time of each stage (the caller adds the import it did).
    pub phases: PhaseTimes,
}

impl BuildOptions {
    /// The passes before and after AD, resolved from the command line.
    pub fn pipelines(&self) -> Result<(Vec<&'static PassInfo>, Vec<&'static PassInfo>), PassError> {
        let explicit_list =
            self.pass_args.passes.as_deref().is_some_and(|list| {
                list.split(',')
                    .map(str::trim)
                    .any(|n| !n.is_empty() && !n.starts_with('+') && !n.starts_with('-'))
            }) || self.pass_args.passes.as_deref().is_some_and(|l| l.trim().is_empty());
        let pre = self.pass_args.resolve("pre-ad")?;
        if explicit_list {
            return Ok((pre, Vec::new()));
        }
        // `--pipeline` names the pre-AD pipeline only; the toggles apply to both.
        let post_args = PassArgs { pipeline: None, ..self.pass_args.clone() };
        let post = post_args.resolve("post-ad")?;
        Ok((pre, post))
    }
}

/// Runs the AD pipeline on `module` and produces the output. `name` names the object.
pub fn build(
    module: &mut Module,
    name: &str,
    options: &BuildOptions,
    synth: &mut dyn Synthesize,
) -> Result<BuildOutput, BuildError> {
    let (pre, post) = options.pipelines().map_err(BuildError::Passes)?;
    let manager_options = options.pass_args.options().map_err(BuildError::Passes)?;
    let mut diagnostics = String::new();
    let mut phases = PhaseTimes::default();
    let mut run = |module: &mut Module,
                   passes: &[&'static PassInfo],
                   stage: &'static str,
                   phases: &mut PhaseTimes| {
        let phase = stage.trim_start_matches("the ");
        let (report, result) =
            phases.time(phase, || adc_passes::run_passes(module, passes, &manager_options));
        diagnostics.push_str(&report_text(&report));
        result.map_err(BuildError::Passes)?;
        phases.time("verification", || check(module, stage))
    };
    if options.flush_denormals && !matches!(options.emit, Emit::Object | Emit::Ir) {
        return Err(BuildError::Backend(
            "--denormals=flush applies to CPU code; PTX chooses flushing per instruction (.ftz)"
                .into(),
        ));
    }
    let lower = |module: &mut Module, synth: &mut dyn Synthesize| {
        let lowering = lower_enzyme_calls(module, synth).map_err(BuildError::Ad)?;
        if options.flush_denormals {
            flush_denormals_in(module, &lowering.derivatives);
        }
        Ok::<_, BuildError>(lowering)
    };
    if options.specialize_args {
        // Before the pre-AD pipeline, which makes the bound calls direct and inlines them.
        phases
            .time("specialize-args", || adc_ad::enzyme_api::specialize_function_arguments(module));
    }
    if options.scalarize_vectors || options.devectorize_loops {
        // After specialization (a specialized copy is what the call differentiates now)
        // and before the pre-AD pipeline, which cleans the lanes up.
        let copy_options = adc_ad::enzyme_api::ScalarCopyOptions {
            scalarize: options.scalarize_vectors,
            devectorize_loops: options.devectorize_loops,
        };
        phases.time("scalarize-vectors", || {
            adc_ad::enzyme_api::scalarize_differentiated_functions(module, copy_options)
        });
    }
    let mut differentiate = |module: &mut Module, phases: &mut PhaseTimes| {
        let lowering = phases.time("differentiation", || lower(module, synth))?;
        phases.time("verification", || check(module, "differentiation"))?;
        Ok::<_, BuildError>(lowering)
    };
    let lowering = if options.ad_before_opt {
        let lowering = differentiate(module, &mut phases)?;
        run(module, &pre, "the pre-AD pipeline", &mut phases)?;
        run(module, &post, "the post-AD pipeline", &mut phases)?;
        lowering
    } else {
        run(module, &pre, "the pre-AD pipeline", &mut phases)?;
        let lowering = differentiate(module, &mut phases)?;
        run(module, &post, "the post-AD pipeline", &mut phases)?;
        lowering
    };
    let bytes = phases.time("code generation", || match options.emit {
        Emit::Ir => Ok(print_module(module).into_bytes()),
        Emit::Object => adc_backend::compile_object_with(module, name, &options.backend)
            .map_err(|d| BuildError::Backend(d.to_string())),
        Emit::Ptx(arch) => {
            link_libdevice(module)?;
            let options = adc_ptx::PtxOptions { arch, ..Default::default() };
            adc_ptx::emit_module(module, &options)
                .map_err(|e| BuildError::Backend(e.to_string()))
                .map(String::into_bytes)
        }
    })?;
    Ok(BuildOutput { bytes, diagnostics, lowering, phases })
}

/// Brackets each derivative's body with `__adc_fp_flush_enter` (at entry: sets
/// flush-to-zero and denormals-are-zero, returns the previous floating-point control
/// state) and `__adc_fp_flush_exit` (before every return: restores it); the backend
/// defines both. The calls have no declared effects, so no pass moves or drops them;
/// inlining a derivative keeps them around its body.
///
/// Why: adjoints are often products of tiny weights (GMM's softmax over far components
/// at d = 64), and every operation on a denormal costs a microcode assist (~100 cycles on
/// x86): with IEEE denormals the GMM gradient at d = 64, K = 25 takes 2.1x as long.
/// Flushing changes only values below 2.2e-308, to zero.
fn flush_denormals_in(module: &mut Module, derivatives: &[FuncId]) {
    let helper = |module: &mut Module, name: &str, params: Vec<Type>, ret: Option<Type>| {
        module.function_by_name(name).unwrap_or_else(|| {
            let mut f = adc_ir::Function::new(name, Signature::new(params, ret));
            f.attrs = FuncAttrs::NOUNWIND | FuncAttrs::WILLRETURN;
            module.add_function(f)
        })
    };
    let enter = helper(module, adc_backend::FLUSH_ENTER, vec![], Some(Type::I32));
    let exit = helper(module, adc_backend::FLUSH_EXIT, vec![Type::I32], None);
    for &id in derivatives {
        let func = &mut module.functions[id];
        let Some(entry) = func.entry_block() else { continue };
        let call = |callee, args| InstructionData::Call { callee, args, attrs: FuncAttrs::empty() };
        let saved = func.dfg.make_inst(call(enter, vec![]), Some(Type::I32));
        match func.layout.first_inst(entry) {
            Some(first) => func.layout.insert_inst_before(saved, first),
            None => func.layout.append_inst(saved, entry),
        }
        let Some(state) = func.dfg.inst_result(saved) else { continue };
        let returns: Vec<adc_ir::Inst> = func
            .layout
            .insts()
            .filter(|(_, i)| matches!(func.dfg.insts[*i], InstructionData::Return { .. }))
            .map(|(_, i)| i)
            .collect();
        for ret in returns {
            let restore = func.dfg.make_inst(call(exit, vec![state]), None);
            func.layout.insert_inst_before(restore, ret);
            let InstructionData::Return { value: Some(value) } = func.dfg.insts[ret] else {
                continue;
            };
            // Arithmetic is pure, so the backend would compute a returned value where it
            // is used, at the `ret`, after the state is restored: a volatile round trip
            // through a stack slot pins it before the restore.
            let ty = func.dfg.value_type(value).clone();
            let align = ty.align() as u32;
            let alloca = InstructionData::Alloca { ty: ty.clone(), count: None, align };
            let slot = func.dfg.make_inst(alloca, Some(Type::PTR));
            func.layout.insert_inst_before(slot, saved);
            let Some(ptr) = func.dfg.inst_result(slot) else { continue };
            let store = InstructionData::Store { value, ptr, align, volatile: true };
            let store = func.dfg.make_inst(store, None);
            func.layout.insert_inst_before(store, restore);
            let load = InstructionData::Load { ty: ty.clone(), ptr, align, volatile: true };
            let load = func.dfg.make_inst(load, Some(ty));
            func.layout.insert_inst_before(load, ret);
            if let Some(reloaded) = func.dfg.inst_result(load) {
                func.dfg.insts[ret] = InstructionData::Return { value: Some(reloaded) };
            }
        }
    }
}

/// Defines the libdevice functions (`__nv_exp`, and `exp` as derivative rules call it) a
/// device module calls, from the `libdevice.10.bc` that
/// [`adc_ptx::libdevice::discover`] finds; without one, the calls stay `.extern`.
fn link_libdevice(module: &mut Module) -> Result<(), BuildError> {
    let calls_library = module
        .functions
        .values()
        .any(|f| f.is_declaration() && !f.name.starts_with("llvm.") && !f.name.is_empty());
    let Some(path) = calls_library.then(adc_ptx::libdevice::discover).flatten() else {
        return Ok(());
    };
    let (libdevice, _skipped) = adc_frontend_llvm::import_library_bitcode(&path)
        .map_err(|e| BuildError::Backend(format!("cannot import {}: {e}", path.display())))?;
    adc_ptx::libdevice::link_libdevice(module, &libdevice);
    check(module, "libdevice linking")
}

fn check(module: &Module, stage: &'static str) -> Result<(), BuildError> {
    verify_module(module).map_err(|d| BuildError::Invalid { stage, diagnostics: d.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pipeline: Option<&str>, passes: Option<&str>) -> BuildOptions {
        let pass_args = PassArgs {
            pipeline: pipeline.map(String::from),
            passes: passes.map(String::from),
            ..PassArgs::default()
        };
        BuildOptions {
            pass_args,
            ad_before_opt: false,
            emit: Emit::Ir,
            backend: Default::default(),
            flush_denormals: false,
            specialize_args: true,
            scalarize_vectors: true,
            devectorize_loops: true,
        }
    }

    fn names(passes: &[&'static PassInfo]) -> Vec<&'static str> {
        passes.iter().map(|p| p.name).collect()
    }

    #[test]
    fn defaults_are_the_pre_and_post_ad_pipelines() {
        let (pre, post) = options(None, None).pipelines().expect("resolves");
        assert_eq!(names(&pre), adc_passes::pipelines::pipeline("pre-ad").unwrap().passes);
        assert_eq!(names(&post), adc_passes::pipelines::pipeline("post-ad").unwrap().passes);
    }

    #[test]
    fn toggles_apply_to_both_pipelines() {
        let (pre, post) = options(None, Some("-licm")).pipelines().expect("resolves");
        assert!(!names(&pre).contains(&"licm") && !names(&post).contains(&"licm"));
        assert!(names(&pre).contains(&"gvn") && names(&post).contains(&"gvn"));
    }

    #[test]
    fn pipeline_replaces_the_pre_ad_half_only() {
        let (pre, post) = options(Some("O0"), None).pipelines().expect("resolves");
        assert!(pre.is_empty());
        assert_eq!(names(&post), adc_passes::pipelines::pipeline("post-ad").unwrap().passes);
    }

    #[test]
    fn an_explicit_list_runs_exactly_those_passes() {
        let (pre, post) = options(None, Some("mem2reg,dce")).pipelines().expect("resolves");
        assert_eq!(names(&pre), ["mem2reg", "dce"]);
        assert!(post.is_empty());
        let (pre, post) = options(None, Some("")).pipelines().expect("resolves");
        assert!(pre.is_empty() && post.is_empty());
    }

    #[test]
    fn unknown_names_are_errors() {
        let err = options(None, Some("-nope")).pipelines().unwrap_err().to_string();
        assert!(err.contains("nope"), "{err}");
        let err = options(Some("O7"), None).pipelines().unwrap_err().to_string();
        assert!(err.contains("O7"), "{err}");
    }

    #[test]
    fn ad_errors_render_with_the_source_location() {
        let site = adc_ad::Site {
            function: "loss".into(),
            inst: Some("%v3 = call @mystery(%v1)".into()),
            source: Some("prog.c:12:7".into()),
        };
        let kind = adc_ad::AdErrorKind::UnknownExternal { callee: "mystery".into() };
        let text = render_ad_error(&AdError::new(site.clone(), kind.clone()), None);
        assert!(text.starts_with("prog.c:12:7: error: no derivative is known"), "{text}");
        assert!(text.contains("in @loss, at `%v3 = call @mystery(%v1)`"), "{text}");
        let bare = adc_ad::Site { source: None, ..site };
        let text = render_ad_error(&AdError::new(bare, kind), Some(Path::new("prog.bc")));
        assert!(text.starts_with("prog.bc: error:"), "{text}");
    }
}
