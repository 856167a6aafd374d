//! `gvn` and `cse`: dominator-tree-scoped value numbering.
//!
//! Walking the dominator tree, each pure instruction (arithmetic, compares, casts,
//! `ptradd`, aggregates, constants, `readnone` calls) is keyed by its opcode, types and
//! operands — commutative operands sorted, flags left out. A later instruction with the
//! key of one that dominates it is replaced by it, and the survivor keeps only the flags
//! both had (an `add nsw` that replaces a plain `add` loses `nsw`). The table is scoped:
//! leaving a dominator subtree forgets what it added. Division is numbered like any
//! other pure instruction: the dominating copy already ran, so nothing new can trap.
//!
//! `gvn` also numbers memory: a non-volatile load is replaced by an earlier load of the
//! same type from the same pointer value, or by the value an earlier store wrote there
//! (store-to-load forwarding), as long as nothing in between may have written the bytes
//! (`alias::AliasAnalysis`: distinct and private objects, noalias parameters, disjoint
//! constant offsets, TBAA, declared and inferred call effects). Memory facts flow only along straight-line code and into a block whose
//! only predecessor is its immediate dominator; every join starts with no memory facts.
//!
//! `cse` is the same walk without the memory part (cheaper, and never reorders memory).
//!
//! Statistics: "instructions removed" (all), "loads forwarded" (loads replaced by an
//! earlier load or store).

// Fx hashing: these tables are hot and keyed by entities (see adc_ir::FxHashMap).
use adc_ir::FxHashMap as HashMap;

use std::sync::Arc;

use adc_ir::{
    BinaryOp, Block, CastOp, Constant, Diagnostic, FloatCC, FuncId, Function, InstFlags,
    InstructionData, IntCC, Module, ReduceOp, Type, UnaryOp, Value,
};

use crate::alias::{call_effects, AliasAnalysis, AliasResult, MemLoc};
use crate::cfg::ControlFlowGraph;
use crate::domtree::DominatorTree;
use crate::effects::ModuleEffects;
use crate::manager::{FunctionContext, FunctionPass, Pass, PreservedAnalyses};
use crate::scalar_util::resolve;

/// `memory: false` is `cse`.
pub struct Gvn {
    pub memory: bool,
}

impl Pass for Gvn {
    fn name(&self) -> &'static str {
        if self.memory {
            "gvn"
        } else {
            "cse"
        }
    }
}

/// A value some load or store made known: `*ptr` as `ty` is `value`; `tbaa` is the
/// access type of the instruction that made it known.
#[derive(Clone)]
struct Known {
    ptr: Value,
    ty: Type,
    value: Value,
    tbaa: Option<Arc<str>>,
}

impl Known {
    fn loc(&self) -> MemLoc {
        MemLoc { ptr: self.ptr, size: Some(self.ty.size()), tbaa: self.tbaa.clone() }
    }
}

impl FunctionPass for Gvn {
    fn run(
        &self,
        func: &mut Function,
        cx: &mut FunctionContext<'_>,
    ) -> Result<PreservedAnalyses, Diagnostic> {
        let dt = cx.analysis::<DominatorTree>(func);
        let cfg = cx.analysis::<ControlFlowGraph>(func);
        let Some(entry) = func.entry_block() else {
            return Ok(PreservedAnalyses::All);
        };
        let module = cx.module;
        let effects = cx.module_analysis::<ModuleEffects>();
        // Only gvn reasons about memory; cse never asks for alias facts.
        let aa = if self.memory { Some(cx.analysis::<AliasAnalysis>(func)) } else { None };
        let mut table: HashMap<Key, Value> = HashMap::default();
        // Removed results and what replaces them. Uses are rewritten as the walk reaches
        // them, and once more over the whole function at the end (unreachable blocks):
        // linear, where replacing each value's uses on the spot scanned the function once
        // per removal.
        let mut replaced: HashMap<Value, Value> = HashMap::default();
        let mut removed = 0u64;
        let mut forwarded = 0u64;
        // Explicit stack: (block, memory facts at its end of the parent, undo mark).
        enum Step {
            Enter(Block, Vec<Known>),
            Leave(Vec<Key>),
        }
        let mut stack = vec![Step::Enter(entry, Vec::new())];
        while let Some(step) = stack.pop() {
            let (block, inherited) = match step {
                Step::Enter(b, m) => (b, m),
                Step::Leave(keys) => {
                    for k in keys {
                        table.remove(&k);
                    }
                    continue;
                }
            };
            let preds = cfg.preds(block);
            let mut memory = if preds.len() == 1 && Some(preds[0]) == dt.idom(block) {
                inherited
            } else {
                Vec::new()
            };
            let mut added: Vec<Key> = Vec::new();
            for inst in func.layout.block_insts(block).to_vec() {
                // Operands first take the values their removed definitions were replaced by
                // (defined in a dominator: already walked), so keys compare numbered values.
                if !replaced.is_empty() {
                    func.dfg.insts[inst].map_args(|v| resolve(&replaced, v));
                }
                let data = &func.dfg.insts[inst];
                let result = func.dfg.inst_result(inst);
                if let (Some(result), Some(key)) = (result, pure_key(module, &effects, data)) {
                    if let Some(&earlier) = table.get(&key) {
                        let flags = data.flags();
                        if let Some(def) = def_inst(func, earlier) {
                            if let Some(f) = func.dfg.insts[def].flags_mut() {
                                *f = InstFlags(f.0 & flags.map_or(0, |x| x.0));
                            }
                            // The kept address now stands for both: it stays in the
                            // union of their arrays, or anywhere if either could go.
                            func.dfg.index_bounds[def] =
                                match (func.dfg.index_bounds[def], func.dfg.index_bounds[inst]) {
                                    (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                                    _ => None,
                                };
                        }
                        replaced.insert(result, earlier);
                        func.layout.remove_inst(inst);
                        removed += 1;
                    } else {
                        table.insert(key.clone(), result);
                        added.push(key);
                    }
                    continue;
                }
                let Some(aa) = aa.as_deref() else {
                    continue;
                };
                let tbaa = func.dfg.tbaa[inst].clone();
                match data.clone() {
                    InstructionData::Load { ty, ptr, volatile: false, .. } => {
                        let Some(result) = result else { continue };
                        if let Some(k) = memory.iter().find(|k| k.ptr == ptr && k.ty == ty) {
                            let value = k.value;
                            replaced.insert(result, value);
                            func.layout.remove_inst(inst);
                            removed += 1;
                            forwarded += 1;
                        } else {
                            memory.push(Known { ptr, ty, value: result, tbaa });
                        }
                    }
                    InstructionData::Store { value, ptr, volatile: false, .. } => {
                        let ty = func.dfg.value_type(value).clone();
                        let written = MemLoc { ptr, size: Some(ty.size()), tbaa: tbaa.clone() };
                        memory.retain(|k| {
                            aa.alias(module, func, &k.loc(), &written) == AliasResult::NoAlias
                        });
                        memory.push(Known { ptr, ty, value, tbaa });
                    }
                    _ => memory.retain(|k| !aa.mod_ref(module, func, inst, &k.loc()).may_write()),
                }
            }
            stack.push(Step::Leave(added));
            for &child in dt.children(block).iter().rev() {
                stack.push(Step::Enter(child, memory.clone()));
            }
        }
        if !replaced.is_empty() {
            for data in func.dfg.insts.values_mut() {
                data.map_args(|v| resolve(&replaced, v));
            }
        }
        cx.stats.add("instructions removed", removed);
        if self.memory {
            cx.stats.add("loads forwarded", forwarded);
        }
        Ok(if removed > 0 { PreservedAnalyses::Cfg } else { PreservedAnalyses::All })
    }
}

fn def_inst(func: &Function, v: Value) -> Option<adc_ir::Inst> {
    match func.dfg.value_def(v) {
        adc_ir::ValueDef::Result(i) => Some(i),
        adc_ir::ValueDef::Param(..) => None,
    }
}

/// The value-numbering key of a pure instruction: its opcode, the types and immediates
/// that decide its result, and its (already numbered) operands. Flags and call attributes
/// are left out: equal keys compute the same value, and the survivor keeps the flags both
/// copies had.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Key {
    Const(Type, Constant),
    Unary(UnaryOp, Value),
    /// Commutative operations have their operands in `Value` order.
    Binary(BinaryOp, [Value; 2]),
    Fma([Value; 3]),
    Icmp(IntCC, [Value; 2]),
    Fcmp(FloatCC, [Value; 2]),
    Select([Value; 3]),
    Cast(CastOp, Value, Type),
    PtrAdd(Value, Value),
    ExtractLane(Value, Value),
    InsertLane(Value, Value, Value),
    Shuffle([Value; 2], Vec<Option<u32>>),
    Reduce(ReduceOp, Vec<Value>),
    ExtractValue(Value, Vec<u32>),
    InsertValue(Value, Value, Vec<u32>),
    /// A call that touches no memory.
    Call(FuncId, Vec<Value>),
}

/// The value-numbering key of a pure instruction, `None` for anything else. Value
/// numbering never speculates (a merged instruction is dominated by its twin, which
/// already ran), so division and lane accesses, which may trap, are numbered too.
fn pure_key(module: &Module, effects: &ModuleEffects, data: &InstructionData) -> Option<Key> {
    use InstructionData as I;
    Some(match data {
        I::Const { ty, value } => Key::Const(ty.clone(), value.clone()),
        I::Unary { op, arg, .. } => Key::Unary(*op, *arg),
        I::Binary { op, args, .. } => {
            let mut args = *args;
            if op.is_commutative() {
                args.sort();
            }
            Key::Binary(*op, args)
        }
        I::Fma { args, .. } => Key::Fma(*args),
        I::Icmp { cond, args } => Key::Icmp(*cond, *args),
        I::Fcmp { cond, args, .. } => Key::Fcmp(*cond, *args),
        I::Select { args, .. } => Key::Select(*args),
        I::Cast { op, arg, ty } => Key::Cast(*op, *arg, ty.clone()),
        I::PtrAdd { ptr, offset, .. } => Key::PtrAdd(*ptr, *offset),
        I::ExtractLane { vector, index } => Key::ExtractLane(*vector, *index),
        I::InsertLane { vector, value, index } => Key::InsertLane(*vector, *value, *index),
        I::Shuffle { args, mask } => Key::Shuffle(*args, mask.clone()),
        I::Reduce { op, args, .. } => Key::Reduce(*op, args.clone()),
        I::ExtractValue { aggregate, indices } => Key::ExtractValue(*aggregate, indices.clone()),
        I::InsertValue { aggregate, value, indices } => {
            Key::InsertValue(*aggregate, *value, indices.clone())
        }
        I::Call { callee, args, .. } => {
            let e = call_effects(module, effects, data);
            if e.reads() || e.writes() {
                return None;
            }
            Key::Call(*callee, args.clone())
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::run_pass_on_text as run;

    #[test]
    fn commutative_operands_and_flags() {
        let (text, report) = run(
            "gvn",
            "func @f(%a: i64, %b: i64) -> i64 {\n^e:\n  %x = add nsw i64 %a, %b\n  %y = add i64 %b, %a\n  %z = mul i64 %x, %y\n  ret %z\n}\n",
        );
        assert_eq!(report.stat("gvn", "instructions removed"), 1, "{text}");
        assert!(text.contains("%x = add i64 %a, %b") && text.contains("mul i64 %x, %x"), "{text}");
    }

    #[test]
    fn cse_leaves_loads_alone() {
        let src = "func @f(%p: ptr) -> i64 {\n^e:\n  %x = load i64, %p, align 8\n  %y = load i64, %p, align 8\n  %z = add i64 %x, %y\n  ret %z\n}\n";
        let (_, report) = run("cse", src);
        assert_eq!(report.stat("cse", "instructions removed"), 0);
        let (_, report) = run("gvn", src);
        assert_eq!(report.stat("gvn", "loads forwarded"), 1);
    }

    /// gvn on `text` after tagging the function's instructions (in layout order) with
    /// the given TBAA access types; `None` leaves one untagged.
    /// Two equal addresses with array bounds: the one kept stays in the union of both
    /// arrays; with one unbounded, it is unbounded.
    #[test]
    fn merged_addresses_keep_the_union_of_their_bounds() {
        let text = "func @f(%p: ptr, %o: i64) {\n^e:\n  %a = ptradd ptr %p, %o\n  %b = ptradd ptr %p, %o\n  %z = const f64 0.0\n  store %z, %a, align 8\n  store %z, %b, align 8\n  ret\n}\n";
        for (second, merged) in [(Some((8, 40)), Some((0, 40))), (None, None)] {
            let mut module = adc_ir::text::parse_module(text).unwrap();
            let func = module.functions.values_mut().next().unwrap();
            let insts: Vec<adc_ir::Inst> = func.layout.insts().map(|(_, i)| i).collect();
            func.dfg.index_bounds[insts[0]] = Some((0, 32));
            func.dfg.index_bounds[insts[1]] = second;
            let options = crate::Options { verify_each: true, ..Default::default() };
            let (_, result) =
                crate::run_passes(&mut module, &[crate::lookup("gvn").unwrap()], &options);
            result.unwrap();
            let func = module.functions.values().next().unwrap();
            let kept = func.layout.insts().next().unwrap().1;
            assert_eq!(func.dfg.index_bounds[kept], merged);
            assert_eq!(func.layout.insts().count(), insts.len() - 1);
        }
    }

    fn gvn_with_tbaa(text: &str, tags: &[Option<&str>]) -> (String, crate::Report) {
        let mut module = adc_ir::text::parse_module(text).unwrap();
        let func = module.functions.values_mut().find(|f| !f.is_declaration()).unwrap();
        let insts: Vec<adc_ir::Inst> = func.layout.insts().map(|(_, i)| i).collect();
        for (inst, tag) in insts.iter().zip(tags) {
            func.dfg.tbaa[*inst] = tag.map(Into::into);
        }
        let options = crate::Options { verify_each: true, ..Default::default() };
        let (report, result) =
            crate::run_passes(&mut module, &[crate::lookup("gvn").unwrap()], &options);
        result.unwrap();
        (adc_ir::text::print_module(&module), report)
    }

    const TBAA: &str = "func @f(%p: ptr, %q: ptr, %x: f64, %k: i64) -> f64 {\n^e:\n  store %x, %p, align 8\n  store %k, %q, align 8\n  %y = load f64, %p, align 8\n  ret %y\n}\n";

    #[test]
    fn a_store_of_a_tbaa_distinct_type_does_not_kill_a_known_value() {
        let tags = [Some("double"), Some("long"), Some("double")];
        let (text, report) = gvn_with_tbaa(TBAA, &tags);
        assert_eq!(report.stat("gvn", "loads forwarded"), 1, "{text}");
        assert!(text.contains("ret %x"), "{text}");
    }

    #[test]
    fn char_or_missing_tbaa_keeps_the_store_a_clobber() {
        for tags in [
            [Some("double"), Some("omnipotent char"), Some("double")],
            [Some("double"), None, Some("double")],
            [None, None, None],
        ] {
            let (text, report) = gvn_with_tbaa(TBAA, &tags);
            assert_eq!(report.stat("gvn", "loads forwarded"), 0, "{tags:?}: {text}");
        }
    }
}
