//! The pass manager: the `Pass` traits, the analysis cache, and the run loop that owns all
//! instrumentation (verify-each, print-before/after, timing and statistics, opt-bisect,
//! JSON lines).
//!
//! Invariants: passes never verify, print or time themselves — the run loop does it, so
//! every pass gets the same instrumentation for free (rustc MIR's rule). Analyses are
//! cached per function and dropped according to the `PreservedAnalyses` that each
//! transform returns; module analyses are dropped after any pass that changed anything.
//! Consecutive function transforms run function by function as one group (see
//! `PassManager::function_group_len`), which keeps each function hot in the caches.
//! Nothing here is global: the `Options` are passed down and recorded in the `Report`.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::{Duration, Instant};

use adc_ir::text::print_module;
use adc_ir::verify::verify_module;
use adc_ir::{Diagnostic, Diagnostics, FuncId, Function, Module};

use crate::registry::{PassInfo, PassKind};

/// What a transform leaves valid. A pass that changed nothing returns `All`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum PreservedAnalyses {
    /// Nothing changed (or only things no analysis reads).
    All,
    /// Instructions changed, but not the blocks, their order, or any branch edge: the
    /// CFG, dominator tree, frontiers and loop nest stay valid.
    Cfg,
    /// Anything may have changed.
    None,
}

impl PreservedAnalyses {
    /// Whether the pass reported a change.
    pub fn changed(self) -> bool {
        self != PreservedAnalyses::All
    }

    /// The weaker of two facts (what a pass preserves over several functions or steps).
    pub fn meet(self, other: PreservedAnalyses) -> PreservedAnalyses {
        use PreservedAnalyses::*;
        match (self, other) {
            (None, _) | (_, None) => None,
            (Cfg, _) | (_, Cfg) => Cfg,
            (All, All) => All,
        }
    }

    /// Whether an analysis that reads `depends_on` survives.
    pub fn keeps(self, depends_on: DependsOn) -> bool {
        match self {
            PreservedAnalyses::All => true,
            PreservedAnalyses::Cfg => depends_on == DependsOn::Cfg,
            PreservedAnalyses::None => false,
        }
    }
}

/// What a function analysis reads, which decides when it is invalidated.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum DependsOn {
    /// Only blocks and branch edges (cfg, domtree, frontiers, loops).
    Cfg,
    /// Instructions too (induction variables, alias facts).
    Instructions,
}

/// A per-function analysis: a struct computed from a function, cached by the manager.
pub trait FunctionAnalysis: Any + Sized {
    /// kebab-case name, for messages.
    const NAME: &'static str;
    const DEPENDS_ON: DependsOn;
    /// Computes the analysis; other analyses are requested through `cx`. Must not panic on
    /// any verified function (unreachable blocks included).
    fn compute(func: &Function, cx: &mut AnalysisContext<'_>) -> Self;
}

/// A whole-module analysis (call graph, function effects). Dropped after any change.
pub trait ModuleAnalysis: Any + Sized {
    const NAME: &'static str;
    fn compute(module: &Module, am: &mut AnalysisManager) -> Self;
}

/// What `FunctionAnalysis::compute` sees besides the function.
pub struct AnalysisContext<'a> {
    pub module: &'a Module,
    pub func_id: FuncId,
    am: &'a mut AnalysisManager,
}

impl AnalysisContext<'_> {
    /// Another analysis of the same function (cached).
    pub fn get<A: FunctionAnalysis>(&mut self, func: &Function) -> Rc<A> {
        self.am.function::<A>(self.module, self.func_id, func)
    }

    pub fn module_analysis<A: ModuleAnalysis>(&mut self) -> Rc<A> {
        self.am.module::<A>(self.module)
    }
}

struct CachedAnalysis {
    depends_on: DependsOn,
    value: Rc<dyn Any>,
}

/// The analysis cache. Results are `Rc`s so a pass may hold one while it mutates the
/// function; it is then the pass's job not to trust it past its own changes (or to call
/// `FunctionContext::invalidate` and ask again).
#[derive(Default)]
pub struct AnalysisManager {
    functions: HashMap<FuncId, HashMap<TypeId, CachedAnalysis>>,
    module: HashMap<TypeId, Rc<dyn Any>>,
    /// How many analyses were computed (not served from the cache); for tests.
    pub computations: u64,
}

impl AnalysisManager {
    pub fn new() -> AnalysisManager {
        AnalysisManager::default()
    }

    /// The analysis `A` of `func` (which is `module.functions[id]`, or the working copy a
    /// function pass is transforming).
    pub fn function<A: FunctionAnalysis>(
        &mut self,
        module: &Module,
        id: FuncId,
        func: &Function,
    ) -> Rc<A> {
        let key = TypeId::of::<A>();
        if let Some(cached) = self.functions.get(&id).and_then(|m| m.get(&key)) {
            if let Ok(value) = cached.value.clone().downcast::<A>() {
                return value;
            }
        }
        let value =
            Rc::new(A::compute(func, &mut AnalysisContext { module, func_id: id, am: self }));
        self.computations += 1;
        let cached = CachedAnalysis { depends_on: A::DEPENDS_ON, value: value.clone() };
        self.functions.entry(id).or_default().insert(key, cached);
        value
    }

    pub fn module<A: ModuleAnalysis>(&mut self, module: &Module) -> Rc<A> {
        let key = TypeId::of::<A>();
        if let Some(value) = self.module.get(&key).and_then(|v| v.clone().downcast::<A>().ok()) {
            return value;
        }
        let value = Rc::new(A::compute(module, self));
        self.computations += 1;
        self.module.insert(key, value.clone());
        value
    }

    /// Drops what `preserved` does not keep for one function.
    pub fn invalidate_function(&mut self, id: FuncId, preserved: PreservedAnalyses) {
        if let Some(cache) = self.functions.get_mut(&id) {
            cache.retain(|_, c| preserved.keeps(c.depends_on));
        }
    }

    /// Drops what `preserved` does not keep, in every function, and the module analyses
    /// unless everything is preserved.
    pub fn invalidate_all(&mut self, preserved: PreservedAnalyses) {
        let ids: Vec<FuncId> = self.functions.keys().copied().collect();
        for id in ids {
            self.invalidate_function(id, preserved);
        }
        if preserved.changed() {
            self.module.clear();
        }
    }
}

/// Named counters a pass increments ("instructions removed", "loads forwarded").
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Statistics(pub BTreeMap<&'static str, u64>);

impl Statistics {
    pub fn add(&mut self, name: &'static str, n: u64) {
        *self.0.entry(name).or_insert(0) += n;
    }

    pub fn inc(&mut self, name: &'static str) {
        self.add(name, 1);
    }

    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }
}

/// Settings of one run, passed down (never global) and recorded in the report.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Options {
    /// Run the verifier after every pass; a failure names the pass.
    pub verify_each: bool,
    /// Pass names (or `all`) before which the module is printed.
    pub print_before: Vec<String>,
    /// Pass names (or `all`) after which the module is printed.
    pub print_after: Vec<String>,
    /// Per-pass time and statistics in the report's table.
    pub time_passes: bool,
    /// Run only the first N non-required passes of the sequence (1-based positions).
    pub opt_bisect_limit: Option<usize>,
    /// One JSON line per pass in `Report::json_lines`.
    pub json_stats: bool,
}

impl Options {
    /// A one-line JSON object (recorded in every JSON line).
    pub fn to_json(&self) -> String {
        let list = |names: &[String]| {
            let quoted: Vec<String> = names.iter().map(|n| json_string(n)).collect();
            format!("[{}]", quoted.join(","))
        };
        format!(
            "{{\"verify_each\":{},\"print_before\":{},\"print_after\":{},\"time_passes\":{},\"opt_bisect_limit\":{},\"json_stats\":{}}}",
            self.verify_each,
            list(&self.print_before),
            list(&self.print_after),
            self.time_passes,
            self.opt_bisect_limit.map_or("null".to_string(), |n| n.to_string()),
            self.json_stats
        )
    }

    fn prints(list: &[String], name: &str) -> bool {
        list.iter().any(|n| n == name || n == "all")
    }
}

/// What every pass needs: a name, and whether opt-bisect and `-name` toggles may skip it.
pub trait Pass {
    /// The registry name, e.g. `licm`.
    fn name(&self) -> &'static str;
    /// Required passes run even when a `-name` toggle or opt-bisect would skip them
    /// (lowering that later stages depend on).
    fn is_required(&self) -> bool {
        false
    }
}

/// A pass over one function at a time (most transforms). The manager runs it on every
/// defined function in module order, on a working copy that replaces the original
/// afterwards, so `cx.module` stays a consistent module to read callees from.
pub trait FunctionPass: Pass {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic>;
}

/// A pass over the whole module (inlining, effect inference, anything interprocedural).
pub trait ModulePass: Pass {
    fn run(
        &self,
        module: &mut Module,
        cx: &mut ModuleContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic>;
}

/// A pass as the registry creates it.
pub enum AnyPass {
    Function(Box<dyn FunctionPass>),
    Module(Box<dyn ModulePass>),
}

impl AnyPass {
    pub fn name(&self) -> &'static str {
        match self {
            AnyPass::Function(p) => p.name(),
            AnyPass::Module(p) => p.name(),
        }
    }

    pub fn is_required(&self) -> bool {
        match self {
            AnyPass::Function(p) => p.is_required(),
            AnyPass::Module(p) => p.is_required(),
        }
    }
}

/// What a function pass sees besides its function.
pub struct FunctionContext<'a> {
    /// The module as it was before this pass touched this function (earlier functions
    /// already transformed). Read callee signatures and attributes from it.
    pub module: &'a Module,
    pub func_id: FuncId,
    pub options: &'a Options,
    /// Counters summed over all functions into the pass's report entry.
    pub stats: &'a mut Statistics,
    /// Text output (analysis printers write here); it goes to the report, in order.
    pub out: &'a mut String,
    analyses: &'a mut AnalysisManager,
}

impl FunctionContext<'_> {
    /// An analysis of the function being transformed (pass the working copy).
    pub fn analysis<A: FunctionAnalysis>(&mut self, func: &Function) -> Rc<A> {
        self.analyses.function::<A>(self.module, self.func_id, func)
    }

    /// A module analysis, computed on `self.module`. Facts about the function being
    /// transformed describe its pre-pass version, which a correct pass does not change.
    pub fn module_analysis<A: ModuleAnalysis>(&mut self) -> Rc<A> {
        self.analyses.module::<A>(self.module)
    }

    /// Call after changing the function mid-pass, before asking for an analysis again.
    pub fn invalidate(&mut self, preserved: PreservedAnalyses) {
        self.analyses.invalidate_function(self.func_id, preserved);
    }
}

/// What a module pass sees besides the module.
pub struct ModuleContext<'a> {
    pub options: &'a Options,
    pub stats: &'a mut Statistics,
    pub out: &'a mut String,
    /// Ask with `cx.analyses.function::<A>(module, id, &module.functions[id])`; call
    /// `invalidate_function` after changing a function if you ask again.
    pub analyses: &'a mut AnalysisManager,
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("unknown pass `{name}`\n  note: valid passes: {valid}")]
    UnknownPass { name: String, valid: String },
    #[error("unknown pipeline `{name}`\n  note: valid pipelines: {valid}")]
    UnknownPipeline { name: String, valid: String },
    #[error("{0}")]
    BadSelection(String),
    #[error("pass `{pass}` failed: {diagnostic}")]
    Failed { pass: &'static str, diagnostic: Diagnostic },
    #[error("the module does not verify after pass `{pass}`:\n{diagnostics}")]
    Verify { pass: &'static str, diagnostics: Diagnostics },
}

/// One position of the pass sequence in a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassRecord {
    /// 1-based position in the sequence (what `--opt-bisect-limit` counts).
    pub index: usize,
    pub name: &'static str,
    /// False when opt-bisect skipped it.
    pub ran: bool,
    pub changed: bool,
    pub time: Duration,
    pub stats: Statistics,
}

impl PassRecord {
    pub fn to_json(&self, options: &Options) -> String {
        let stats: Vec<String> =
            self.stats.0.iter().map(|(k, v)| format!("{}:{v}", json_string(k))).collect();
        format!(
            "{{\"pass\":{},\"index\":{},\"ran\":{},\"changed\":{},\"time_us\":{},\"stats\":{{{}}},\"options\":{}}}",
            json_string(self.name),
            self.index,
            self.ran,
            self.changed,
            self.time.as_micros(),
            stats.join(","),
            options.to_json()
        )
    }
}

/// What a run did: the options, one record per pass position, and the text the run loop
/// and the printers produced (dumps, printer output, bisect lines), in order.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub options: Options,
    pub passes: Vec<PassRecord>,
    pub output: String,
}

impl Report {
    /// One JSON object per pass position, each with the options.
    pub fn json_lines(&self) -> String {
        let mut out = String::new();
        for record in &self.passes {
            out.push_str(&record.to_json(&self.options));
            out.push('\n');
        }
        out
    }

    /// The `--time-passes` table: time per pass, then its statistics.
    pub fn time_table(&self) -> String {
        let total: Duration = self.passes.iter().map(|r| r.time).sum();
        let mut out = String::new();
        let _ =
            writeln!(out, "; pass timings and statistics (options: {})", self.options.to_json());
        let _ = writeln!(out, ";   #  {:<24} {:>10} {:>6}  changed", "pass", "time (ms)", "%");
        for r in &self.passes {
            let ms = r.time.as_secs_f64() * 1e3;
            let pct = if total.is_zero() {
                0.0
            } else {
                100.0 * r.time.as_secs_f64() / total.as_secs_f64()
            };
            let state = if !r.ran {
                "skipped"
            } else if r.changed {
                "yes"
            } else {
                "no"
            };
            let _ =
                writeln!(out, "; {:>3}  {:<24} {ms:>10.3} {pct:>6.1}  {state}", r.index, r.name);
            for (name, value) in &r.stats.0 {
                let _ = writeln!(out, ";        {name}: {value}");
            }
        }
        let _ = writeln!(out, ";      {:<24} {:>10.3}", "total", total.as_secs_f64() * 1e3);
        out
    }

    /// The summed statistics of every run of pass `name`.
    pub fn stat(&self, name: &str, counter: &str) -> u64 {
        self.passes.iter().filter(|r| r.name == name).map(|r| r.stats.get(counter)).sum()
    }
}

/// Runs a resolved pass sequence with the instrumentation the options ask for.
pub struct PassManager {
    passes: Vec<&'static PassInfo>,
    options: Options,
}

impl PassManager {
    pub fn new(passes: Vec<&'static PassInfo>, options: Options) -> PassManager {
        PassManager { passes, options }
    }

    pub fn passes(&self) -> &[&'static PassInfo] {
        &self.passes
    }

    /// Runs every pass in order. The report is returned even when a pass fails, so the
    /// dumps and timings up to the failure are not lost.
    pub fn run(&self, module: &mut Module) -> (Report, Result<(), PassError>) {
        let mut report = Report { options: self.options.clone(), ..Report::default() };
        let mut analyses = AnalysisManager::new();
        let result = self.run_inner(module, None, &mut analyses, &mut report);
        (report, result)
    }

    /// Runs the function passes of the sequence on `function` alone and skips the module
    /// passes: for a caller that changed one function in the middle of a larger job (the
    /// Enzyme API lowering cleans up a function it inlined inner derivatives into before
    /// differentiating it again).
    pub fn run_on_function(
        &self,
        module: &mut Module,
        function: FuncId,
    ) -> (Report, Result<(), PassError>) {
        let mut report = Report { options: self.options.clone(), ..Report::default() };
        let mut analyses = AnalysisManager::new();
        let result = self.run_inner(module, Some(function), &mut analyses, &mut report);
        (report, result)
    }

    /// Every pass in order, or with `only`, the function passes on that function.
    fn run_inner(
        &self,
        module: &mut Module,
        only: Option<FuncId>,
        analyses: &mut AnalysisManager,
        report: &mut Report,
    ) -> Result<(), PassError> {
        let options = &self.options;
        let mut position = 0;
        while position < self.passes.len() {
            let group = self.function_group_len(position);
            if group > 1 {
                let infos = &self.passes[position..position + group];
                self.run_function_group(module, only, analyses, report, position, infos)?;
                position += group;
                continue;
            }
            let info = self.passes[position];
            position += 1;
            let index = position;
            let pass = (info.create)();
            let name = info.name;
            if only.is_some() && matches!(pass, AnyPass::Module(_)) {
                continue;
            }
            let mut record = PassRecord {
                index,
                name,
                ran: true,
                changed: false,
                time: Duration::ZERO,
                stats: Statistics::default(),
            };
            if let Some(limit) = options.opt_bisect_limit {
                let skip = index > limit && !pass.is_required();
                let verb = if skip { "NOT running" } else { "running" };
                let _ = writeln!(report.output, "BISECT: {verb} pass ({index}) {name}");
                if skip {
                    record.ran = false;
                    report.passes.push(record);
                    continue;
                }
            }
            if Options::prints(&options.print_before, name) {
                let _ = writeln!(report.output, "; *** IR before pass {name} ({index}) ***");
                report.output.push_str(&print_module(module));
            }
            let start = Instant::now();
            let preserved = match &pass {
                AnyPass::Module(p) => {
                    let mut cx = ModuleContext {
                        options,
                        stats: &mut record.stats,
                        out: &mut report.output,
                        analyses,
                    };
                    let preserved = p
                        .run(module, &mut cx)
                        .map_err(|diagnostic| PassError::Failed { pass: name, diagnostic })?;
                    analyses.invalidate_all(preserved);
                    preserved
                }
                AnyPass::Function(p) => {
                    run_on_functions(
                        module,
                        only,
                        options,
                        analyses,
                        &mut report.output,
                        &[p.as_ref()],
                        std::slice::from_mut(&mut record),
                    )?;
                    if record.changed {
                        PreservedAnalyses::None
                    } else {
                        PreservedAnalyses::All
                    }
                }
            };
            record.time = start.elapsed();
            record.changed = preserved.changed();
            report.passes.push(record);
            if Options::prints(&options.print_after, name) {
                let _ = writeln!(report.output, "; *** IR after pass {name} ({index}) ***");
                report.output.push_str(&print_module(module));
            }
            if options.verify_each {
                verify_module(module).map_err(|Diagnostics(errors)| PassError::Verify {
                    pass: name,
                    diagnostics: Diagnostics(
                        errors
                            .into_iter()
                            .map(|d| d.with_note(format!("after pass `{name}`")))
                            .collect(),
                    ),
                })?;
            }
        }
        Ok(())
    }

    /// How many transforms from `position` on run function by function as one group: the
    /// function passes up to the next module pass, printer or utility. A group runs every
    /// one of its passes on a function before the next function, so each function's IR
    /// and analyses stay in the cache between passes instead of the whole module passing
    /// through it once per pass (a build of 1,600 functions spent 4.0 ms per function
    /// against 3.2 ms for 100). Options that look at the module between two passes
    /// (verify-each, printing, opt-bisect) run pass by pass.
    fn function_group_len(&self, position: usize) -> usize {
        let o = &self.options;
        if o.verify_each
            || o.opt_bisect_limit.is_some()
            || !o.print_before.is_empty()
            || !o.print_after.is_empty()
        {
            return 1;
        }
        self.passes[position..]
            .iter()
            .take_while(|info| {
                info.kind == PassKind::Transform && matches!((info.create)(), AnyPass::Function(_))
            })
            .count()
    }

    /// Runs the function passes `infos` (positions `first + 1..`) on each function in
    /// turn. Module analyses computed meanwhile see the functions not yet written back
    /// as they were, which a correct pass does not make false (as within one pass); they
    /// are dropped at the end when anything changed.
    fn run_function_group(
        &self,
        module: &mut Module,
        only: Option<FuncId>,
        analyses: &mut AnalysisManager,
        report: &mut Report,
        first: usize,
        infos: &[&'static PassInfo],
    ) -> Result<(), PassError> {
        let options = &self.options;
        let passes: Vec<AnyPass> = infos.iter().map(|info| (info.create)()).collect();
        let mut records: Vec<PassRecord> = infos
            .iter()
            .enumerate()
            .map(|(k, info)| PassRecord {
                index: first + k + 1,
                name: info.name,
                ran: true,
                changed: false,
                time: Duration::ZERO,
                stats: Statistics::default(),
            })
            .collect();
        let function_passes: Vec<&dyn FunctionPass> = passes
            .iter()
            .filter_map(|pass| match pass {
                AnyPass::Function(p) => Some(p.as_ref()),
                AnyPass::Module(_) => None,
            })
            .collect();
        run_on_functions(
            module,
            only,
            options,
            analyses,
            &mut report.output,
            &function_passes,
            &mut records,
        )?;
        report.passes.extend(records);
        Ok(())
    }
}

/// Runs `passes` on every defined function of `module` (or on `only`): each function goes
/// through all of them on one working copy, written back once if any changed it. Each
/// pass's record (same order) gets its statistics, time and `changed`; module analyses
/// (effects, call graph), which read every body, are dropped at the end after a change.
fn run_on_functions(
    module: &mut Module,
    only: Option<FuncId>,
    options: &Options,
    analyses: &mut AnalysisManager,
    output: &mut String,
    passes: &[&dyn FunctionPass],
    records: &mut [PassRecord],
) -> Result<(), PassError> {
    let ids: Vec<FuncId> = match only {
        Some(id) => vec![id],
        None => module.functions.keys().collect(),
    };
    let mut any_changed = false;
    for id in ids {
        if module.functions[id].is_declaration() {
            continue;
        }
        let mut func = module.functions[id].clone();
        let mut changed = false;
        for (pass, record) in passes.iter().zip(records.iter_mut()) {
            let start = Instant::now();
            let mut cx = FunctionContext {
                module,
                func_id: id,
                options,
                stats: &mut record.stats,
                out: &mut *output,
                analyses,
            };
            let preserved =
                pass.run(&mut func, &mut cx).map_err(|diagnostic| PassError::Failed {
                    pass: record.name,
                    diagnostic: diagnostic.with_note(format!("in function @{}", func.name)),
                })?;
            analyses.invalidate_function(id, preserved);
            record.changed |= preserved.changed();
            changed |= preserved.changed();
            record.time += start.elapsed();
        }
        if changed {
            module.functions[id] = func;
            any_changed = true;
        }
    }
    if any_changed {
        analyses.module.clear();
    }
    Ok(())
}

/// A JSON string literal (quotes, backslashes and control characters escaped).
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::ControlFlowGraph;
    use crate::registry::{PassInfo, PassKind};

    fn sum() -> (Module, FuncId) {
        let module = adc_ir::examples::sum_of_sines();
        let id = module.function_by_name("sum").unwrap();
        (module, id)
    }

    /// Counts the instructions of each function; breaks the module when asked to.
    struct Counter {
        breaks: bool,
    }
    impl Pass for Counter {
        fn name(&self) -> &'static str {
            if self.breaks {
                "breaker"
            } else {
                "counter"
            }
        }
    }
    impl FunctionPass for Counter {
        fn run(
            &self,
            func: &mut Function,
            cx: &mut FunctionContext<'_>,
        ) -> Result<PreservedAnalyses, Diagnostic> {
            cx.stats.add("instructions seen", func.layout.insts().count() as u64);
            if self.breaks {
                // Drop the terminator of the entry block: the verifier must object.
                let entry = func.entry_block().unwrap();
                let last = func.layout.last_inst(entry).unwrap();
                func.layout.remove_inst(last);
                return Ok(PreservedAnalyses::None);
            }
            Ok(PreservedAnalyses::All)
        }
    }
    static COUNTER: PassInfo = PassInfo {
        name: "counter",
        description: "test",
        kind: PassKind::Utility,
        create: || AnyPass::Function(Box::new(Counter { breaks: false })),
    };
    static BREAKER: PassInfo = PassInfo {
        name: "breaker",
        description: "test",
        kind: PassKind::Transform,
        create: || AnyPass::Function(Box::new(Counter { breaks: true })),
    };

    #[test]
    fn analyses_are_cached_and_invalidated_by_what_is_preserved() {
        let (module, id) = sum();
        let func = &module.functions[id];
        let mut am = AnalysisManager::new();
        let a = am.function::<ControlFlowGraph>(&module, id, func);
        let b = am.function::<ControlFlowGraph>(&module, id, func);
        assert!(Rc::ptr_eq(&a, &b));
        assert_eq!(am.computations, 1);
        am.invalidate_function(id, PreservedAnalyses::Cfg);
        am.function::<ControlFlowGraph>(&module, id, func);
        assert_eq!(am.computations, 1, "the CFG survives a CFG-preserving pass");
        am.invalidate_function(id, PreservedAnalyses::None);
        am.function::<ControlFlowGraph>(&module, id, func);
        assert_eq!(am.computations, 2);
    }

    #[test]
    fn statistics_are_summed_and_reported() {
        let (mut module, _) = sum();
        let options = Options { time_passes: true, json_stats: true, ..Options::default() };
        let (report, result) = PassManager::new(vec![&COUNTER], options).run(&mut module);
        assert!(result.is_ok());
        assert_eq!(report.stat("counter", "instructions seen"), 15);
        assert!(report.time_table().contains("instructions seen: 15"));
        let json = report.json_lines();
        assert!(json.starts_with("{\"pass\":\"counter\",\"index\":1,\"ran\":true"), "{json}");
        assert!(json.contains("\"options\":{\"verify_each\":false"), "{json}");
    }

    #[test]
    fn verify_each_names_the_pass_that_broke_the_module() {
        let (mut module, _) = sum();
        let options = Options { verify_each: true, ..Options::default() };
        let (_, result) = PassManager::new(vec![&COUNTER, &BREAKER], options).run(&mut module);
        let err = result.unwrap_err().to_string();
        assert!(err.contains("after pass `breaker`"), "{err}");
    }

    #[test]
    fn opt_bisect_skips_later_non_required_passes() {
        let (mut module, _) = sum();
        let options = Options {
            opt_bisect_limit: Some(1),
            print_after: vec!["all".into()],
            ..Options::default()
        };
        let (report, result) = PassManager::new(vec![&COUNTER, &BREAKER], options).run(&mut module);
        assert!(result.is_ok(), "the breaker must not run");
        assert!(report.output.contains("BISECT: NOT running pass (2) breaker"));
        assert!(report.output.contains("; *** IR after pass counter (1) ***"));
        assert!(!report.passes[1].ran);
    }

    #[test]
    fn run_on_function_touches_that_function_and_skips_module_passes() {
        let text = "func internal @unused(%v0: f64) -> f64 {\n^bb0:\n  %v1 = fadd f64 %v0, %v0\n  ret %v1\n}\n\nfunc @kept(%v0: f64) -> f64 {\n^bb0:\n  ret %v0\n}\n";
        let mut module = adc_ir::text::parse_module(text).unwrap();
        let kept = module.function_by_name("kept").unwrap();
        // global-dce would delete the unused internal function: as a module pass it is
        // skipped.
        let global_dce = crate::lookup("global-dce").unwrap();
        let manager = PassManager::new(vec![global_dce, &COUNTER], Options::default());
        let (report, result) = manager.run_on_function(&mut module, kept);
        assert!(result.is_ok());
        assert!(module.function_by_name("unused").is_some());
        assert_eq!(report.stat("counter", "instructions seen"), 1, "only @kept's `ret`");
    }

    /// Function transforms run as a group (function by function) give the module and the
    /// records that running them pass by pass (as `--verify-each` does) gives.
    #[test]
    fn grouped_function_passes_match_pass_by_pass() {
        let text = "func @f(%p: ptr, %n: i64) -> f64 {\n^e:\n  %z = const i64 0\n  %f0 = const f64 0.0\n  jump ^h(%z, %f0)\n^h(%i: i64, %s: f64):\n  %eight = const i64 8\n  %o = mul i64 %i, %eight\n  %a = ptradd ptr %p, %o\n  %x = load f64, %a, align 8\n  %y = load f64, %a, align 8\n  %xy = fmul f64 %x, %y\n  %s2 = fadd f64 %s, %xy\n  %one = const i64 1\n  %i2 = add i64 %i, %one\n  %c = icmp ult i64 %i2, %n\n  brif %c, ^h(%i2, %s2), ^x\n^x:\n  ret %s2\n}\n\nfunc @g(%a: f64) -> f64 {\n^e:\n  %t = const i1 1\n  brif %t, ^l, ^r\n^l:\n  %b = fadd f64 %a, %a\n  ret %b\n^r:\n  ret %a\n}\n";
        let names = ["simplify-cfg", "sccp", "simplify-cfg", "gvn", "licm", "dce"];
        let passes: Vec<&'static PassInfo> =
            names.iter().map(|n| crate::lookup(n).unwrap()).collect();
        let mut grouped = adc_ir::text::parse_module(text).unwrap();
        let mut one_by_one = grouped.clone();
        let (group_report, result) =
            PassManager::new(passes.clone(), Options::default()).run(&mut grouped);
        assert!(result.is_ok());
        let each = Options { verify_each: true, ..Options::default() };
        let (each_report, result) = PassManager::new(passes, each).run(&mut one_by_one);
        assert!(result.is_ok());
        assert_eq!(print_module(&grouped), print_module(&one_by_one));
        let summary = |r: &Report| {
            r.passes
                .iter()
                .map(|p| (p.index, p.name, p.changed, p.stats.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(summary(&group_report), summary(&each_report));
        assert!(group_report.passes.iter().any(|p| p.changed), "the passes had work to do");
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_string("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }
}
