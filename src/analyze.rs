//! `adc analyze`: prints the AD analyses of a module — type trees (with the answer the
//! synthesis would get for every memory access) or the activity of one request — and the
//! same reports for the `type-tree` and `activity` filetest kinds — and the cache plan of
//! a reverse-mode derivative (`cache-plan`: what is stored, what is recomputed, bytes per
//! iteration and per call), also the report of the `cache-plan` filetests.
//!
//! An activity request is written like a filetest header, `@f(dup, const) -> active`, or
//! on the command line as `--fn f --args dup,const --ret active`. Arguments left out take
//! Enzyme's defaults: floats are `active`, pointers `dup`, everything else `const`; the
//! return is `active` when it is a float.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, Result};

use adc_ad::activity::print_activity;
use adc_ad::cache::CacheOptions;
use adc_ad::typetree::print::print_function_types;
use adc_ad::typetree::{BaseType, TypeAnalysis};
use adc_ad::Synthesize as _;
use adc_ad::{ArgActivity, DiffRequest, Differentiator, DifferentiatorOptions, RetActivity};
use adc_ir::text::FunctionPrinter;
use adc_ir::{FuncId, InstructionData, Module, Type};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  adc analyze prog.adir --print type-tree\n  adc analyze prog.bc --print activity --fn loss --args dup,const --ret active"
)]
pub struct AnalyzeArgs {
    /// The input: LLVM bitcode (.bc) or adc's text form (.adir).
    pub input: PathBuf,
    /// What to print.
    #[arg(long, value_parser = ["type-tree", "activity", "cache-plan"])]
    pub print: String,
    /// The function (required for `activity`; all defined functions for `type-tree`).
    #[arg(long = "fn")]
    pub function: Option<String>,
    /// Activity of each argument: const, active, dup, dupnoneed (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub args: Option<Vec<String>>,
    /// Activity of the return: const, active, or dup (a returned pointer and its shadow).
    #[arg(long)]
    pub ret: Option<String>,
    /// Cache planner settings for `cache-plan`: `heuristic` or `mincut`, and toggles
    /// `-cache-ivs`, `-cache-licm`, `-cache-cse` (comma separated; default: `ADC_CACHE` or the defaults).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub cache: Vec<String>,
    /// Run this pass pipeline on the module before analysing it: `pre-ad` shows what
    /// `adc build` differentiates (trip counts, alias facts and so the cache plan depend
    /// on it). Default: the module as given.
    #[arg(long, value_name = "NAME")]
    pub pipeline: Option<String>,
}

/// Runs `adc analyze` on a loaded module; returns what to print.
pub fn run(args: &AnalyzeArgs, module: &Module) -> Result<String> {
    let optimized;
    let module = match &args.pipeline {
        Some(name) => {
            optimized = run_pipeline(module, name)?;
            &optimized
        }
        None => module,
    };
    match args.print.as_str() {
        "type-tree" => {
            let only = args.function.as_deref().map(|name| find_function(module, name));
            type_tree_report(module, only.transpose().map_err(|e| anyhow!(e))?)
                .map_err(|e| anyhow!(e))
        }
        "activity" => {
            let name = args
                .function
                .as_deref()
                .ok_or_else(|| anyhow!("--print activity needs --fn NAME"))?;
            let id = find_function(module, name).map_err(|e| anyhow!(e))?;
            let arg_words: Vec<&str> =
                args.args.iter().flatten().map(|s| s.trim()).filter(|s| !s.is_empty()).collect();
            let request = build_request(module, id, &arg_words, args.ret.as_deref())
                .map_err(|e| anyhow!(e))?;
            print_activity(module, &request).map_err(|e| anyhow!("error: {e}"))
        }
        "cache-plan" => {
            let name = args
                .function
                .as_deref()
                .ok_or_else(|| anyhow!("--print cache-plan needs --fn NAME"))?;
            let id = find_function(module, name).map_err(|e| anyhow!(e))?;
            let arg_words: Vec<&str> =
                args.args.iter().flatten().map(|s| s.trim()).filter(|s| !s.is_empty()).collect();
            let request = build_request(module, id, &arg_words, args.ret.as_deref())
                .map_err(|e| anyhow!(e))?;
            let mut options = CacheOptions::from_env().map_err(|e| anyhow!(e))?;
            for word in &args.cache {
                options.apply(word).map_err(|e| anyhow!(e))?;
            }
            cache_plan_report(module, &[request], options).map_err(|e| anyhow!(e))
        }
        other => {
            Err(anyhow!("unknown analysis `{other}` (valid: type-tree, activity, cache-plan)"))
        }
    }
}

/// A copy of `module` after the pass pipeline `name`.
fn run_pipeline(module: &Module, name: &str) -> Result<Module> {
    let selection = adc_passes::Selection { pipeline: Some(name.to_string()), passes: None };
    let passes = adc_passes::resolve(&selection, name).map_err(|e| anyhow!("error: {e}"))?;
    let mut module = module.clone();
    let (_, result) = adc_passes::run_passes(&mut module, &passes, &Default::default());
    result.map_err(|e| anyhow!("error in the `{name}` pipeline: {e}"))?;
    Ok(module)
}

fn find_function(module: &Module, name: &str) -> Result<FuncId, String> {
    let name = name.strip_prefix('@').unwrap_or(name);
    module.function_by_name(name).ok_or_else(|| format!("no function @{name} in the module"))
}

/// The type trees of `only` (or of every defined function), each followed by what the
/// synthesis learns about each memory access.
pub fn type_tree_report(module: &Module, only: Option<FuncId>) -> Result<String, String> {
    let analysis = TypeAnalysis::analyze(module);
    let mut out = String::new();
    for (id, func) in module.functions.iter() {
        if func.is_declaration() || only.is_some_and(|o| o != id) {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&print_function_types(module, &analysis, id));
        out.push_str(&access_report(module, &analysis, id));
    }
    if out.is_empty() {
        return Err("no defined function to analyze".into());
    }
    Ok(out)
}

/// One line per load, store and copy: `load ... -> Float@double`, `-> not float`, or the
/// error the synthesis would report.
fn access_report(module: &Module, analysis: &TypeAnalysis, id: FuncId) -> String {
    let func = &module.functions[id];
    let printer = FunctionPrinter::new(module, func);
    let mut out = String::new();
    for (_, inst) in func.layout.insts() {
        let answer = match func.inst(inst) {
            InstructionData::Load { ty, ptr, .. } => {
                Some(analysis.float_kind_at(module, id, *ptr, 0, ty.size(), inst).map(kind_text))
            }
            InstructionData::Store { value, ptr, .. } => {
                let size = func.dfg.value_type(*value).size();
                Some(analysis.float_kind_at(module, id, *ptr, 0, size, inst).map(kind_text))
            }
            InstructionData::MemCopy { src, len, .. } => {
                // A copy of unknown length: every fact about the source matters.
                let len = constant_length(func, *len).unwrap_or(u64::MAX);
                Some(Ok(layout_text(analysis.copy_layout(module, id, *src, 0, len, inst))))
            }
            _ => None,
        };
        if let Some(answer) = answer {
            let text = answer.unwrap_or_else(|e| format!("error: {e}"));
            let _ = writeln!(out, "  {} -> {text}", printer.inst_to_string(inst).trim());
        }
    }
    out
}

fn kind_text(kind: Option<adc_ad::typetree::FloatKind>) -> String {
    match kind {
        Some(kind) => BaseType::Float(kind).to_string(),
        None => "not float".into(),
    }
}

fn layout_text(layout: Result<Vec<(Option<u64>, BaseType)>, adc_ad::AdError>) -> String {
    match layout {
        Ok(entries) => {
            let parts: Vec<String> = entries
                .iter()
                .map(|(offset, base)| match offset {
                    Some(o) => format!("{o}:{base}"),
                    None => format!("-1:{base}"),
                })
                .collect();
            format!("[{}]", parts.join(", "))
        }
        Err(e) => format!("error: {e}"),
    }
}

fn constant_length(func: &adc_ir::Function, len: adc_ir::Value) -> Option<u64> {
    let adc_ir::ValueDef::Result(inst) = func.dfg.value_def(len) else { return None };
    match func.inst(inst) {
        InstructionData::Const { value: adc_ir::Constant::Int(n), .. } => u64::try_from(*n).ok(),
        _ => None,
    }
}

/// A request for `id` from activity words; missing arguments take Enzyme's defaults.
pub fn build_request(
    module: &Module,
    id: FuncId,
    args: &[&str],
    ret: Option<&str>,
) -> Result<DiffRequest, String> {
    let func = &module.functions[id];
    let params = &func.signature.params;
    if args.len() > params.len() {
        return Err(format!(
            "{} argument activities given, but @{} has {} parameters",
            args.len(),
            func.name,
            params.len()
        ));
    }
    let mut activities = Vec::with_capacity(params.len());
    for (index, ty) in params.iter().enumerate() {
        let activity = match args.get(index) {
            Some(word) => parse_arg_activity(word)?,
            None => default_activity(ty),
        };
        activities.push(activity);
    }
    let ret = match ret {
        Some("const") => RetActivity::Const,
        Some("active") => RetActivity::Active,
        // A returned pointer whose shadow the caller receives (a split callee's request).
        Some("dup") => RetActivity::Dup,
        Some(other) => {
            return Err(format!("unknown return activity `{other}` (const, active, dup)"))
        }
        None if func.signature.ret.as_ref().is_some_and(Type::is_float) => RetActivity::Active,
        None => RetActivity::Const,
    };
    Ok(DiffRequest::reverse(id, activities, ret))
}

fn parse_arg_activity(word: &str) -> Result<ArgActivity, String> {
    Ok(match word {
        "const" => ArgActivity::Const,
        "active" => ArgActivity::Active,
        "dup" => ArgActivity::Dup,
        "dupnoneed" => ArgActivity::DupNoNeed,
        other => {
            return Err(format!(
                "unknown argument activity `{other}` (const, active, dup, dupnoneed)"
            ))
        }
    })
}

fn default_activity(ty: &Type) -> ArgActivity {
    if ty.is_float() {
        ArgActivity::Active
    } else if ty.is_ptr() {
        ArgActivity::Dup
    } else {
        ArgActivity::Const
    }
}

/// Reads `@f(dup, const) -> active` (the return part is optional).
pub fn parse_request_spec(module: &Module, spec: &str) -> Result<DiffRequest, String> {
    let bad = || format!("expected `@name(activity, ...) -> activity`, got `{spec}`");
    let (call, ret) = match spec.split_once("->") {
        Some((call, ret)) => (call.trim(), Some(ret.trim())),
        None => (spec.trim(), None),
    };
    let name = call.strip_prefix('@').ok_or_else(bad)?;
    let (name, rest) = name.split_once('(').ok_or_else(bad)?;
    let inner = rest.trim_end().strip_suffix(')').ok_or_else(bad)?;
    let args: Vec<&str> = inner.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let id = find_function(module, name.trim())?;
    build_request(module, id, &args, ret)
}

/// The activity report of each request (`; activity:` lines of a filetest). A request
/// the analysis rejects prints as `error: ...`, for checks to match.
pub fn activity_report(module: &Module, specs: &[String]) -> Result<String, String> {
    if specs.is_empty() {
        return Err("an activity test needs `; activity: @f(...) -> ...` lines".into());
    }
    let mut out = String::new();
    for spec in specs {
        let request = parse_request_spec(module, spec)?;
        match print_activity(module, &request) {
            Ok(text) => out.push_str(&text),
            Err(e) => {
                let _ = writeln!(out, "error: {e}");
            }
        }
    }
    Ok(out)
}

/// Synthesizes each reverse-mode request and prints the cache plan of every function
/// synthesized for it (the derivative, then the split functions of its callees).
pub fn cache_plan_report(
    module: &Module,
    requests: &[DiffRequest],
    cache: CacheOptions,
) -> Result<String, String> {
    if requests.is_empty() {
        return Err("a cache-plan report needs a request (`; plan: @f(...) -> ...`)".into());
    }
    let mut out = String::new();
    let mut module = module.clone();
    let options = DifferentiatorOptions { cache, ..Default::default() };
    let mut synth = Differentiator::new(options);
    for request in requests {
        synth.derivative(&mut module, request).map_err(|e| format!("error: {e}"))?;
    }
    for (_, stats) in &synth.stats {
        let _ = write!(out, "{}", stats.plan);
    }
    Ok(out)
}

/// The cache plans of `; plan:` requests (filetest syntax of `activity`).
pub fn cache_plan_spec_report(
    module: &Module,
    specs: &[String],
    cache: CacheOptions,
) -> Result<String, String> {
    let requests =
        specs.iter().map(|s| parse_request_spec(module, s)).collect::<Result<Vec<_>, _>>()?;
    cache_plan_report(module, &requests, cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_spec_defaults_and_errors() {
        let text = "func @f(%p: ptr, %x: f64, %n: i64) -> f64 {\n^e:\n  ret %x\n}\n";
        let module = adc_ir::text::parse_module(text).unwrap();
        let request = parse_request_spec(&module, "@f(const)").unwrap();
        assert_eq!(request.to_string(), "reverse(const, active, const) -> active");
        let request = parse_request_spec(&module, "@f(dup, const, const) -> const").unwrap();
        assert_eq!(request.to_string(), "reverse(dup, const, const) -> const");
        assert!(parse_request_spec(&module, "@f(bogus)").unwrap_err().contains("bogus"));
        assert!(parse_request_spec(&module, "@g()").unwrap_err().contains("no function"));
        assert!(parse_request_spec(&module, "f()").is_err());
    }
}
