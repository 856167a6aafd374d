//! Shrinking at the generator level: a failing program is made smaller one step at a time
//! (drop a derivative request, a statement, a branch, an activity; replace an expression
//! by a literal or by one of its operands; make a helper inline; turn a fresh-block helper
//! into the array helper that computes the same) while it still fails the same way in the same
//! configuration. Every step keeps the program valid, because each candidate is built
//! from constructs that were valid in the same place (see `program.rs` invariants).

use std::path::Path;
use std::time::{Duration, Instant};

use super::program::{Act, Expr, HelperKind, Program, Stmt};
use super::runner::{check, reproducing, Finding, Tools, Verdict};

/// Every expression one simplification away from `e`, biggest cuts first.
fn expr_variants(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    match e {
        Expr::Lit(_) => return out,
        Expr::Bin(_, a, b) | Expr::Call(_, a, b) => {
            out.push((**a).clone());
            out.push((**b).clone());
        }
        Expr::Fun(_, a) => out.push((**a).clone()),
        _ => {}
    }
    out.push(Expr::Lit(0.5));
    match e {
        Expr::Bin(op, a, b) => {
            out.extend(
                expr_variants(a).into_iter().map(|a| Expr::Bin(*op, Box::new(a), b.clone())),
            );
            out.extend(
                expr_variants(b).into_iter().map(|b| Expr::Bin(*op, a.clone(), Box::new(b))),
            );
        }
        Expr::Call(h, a, b) => {
            out.extend(
                expr_variants(a).into_iter().map(|a| Expr::Call(*h, Box::new(a), b.clone())),
            );
            out.extend(
                expr_variants(b).into_iter().map(|b| Expr::Call(*h, a.clone(), Box::new(b))),
            );
        }
        Expr::Fun(f, a) => {
            out.extend(expr_variants(a).into_iter().map(|a| Expr::Fun(*f, Box::new(a))));
        }
        _ => {}
    }
    out
}

fn stmt_variants(s: &Stmt) -> Vec<Stmt> {
    let mut out = Vec::new();
    match s {
        Stmt::Store { base, index, op, value } => {
            for v in expr_variants(value) {
                out.push(Stmt::Store {
                    base: base.clone(),
                    index: index.clone(),
                    op: *op,
                    value: v,
                });
            }
        }
        Stmt::SetScalar { dst, op, value } => {
            for v in expr_variants(value) {
                out.push(Stmt::SetScalar { dst: dst.clone(), op: *op, value: v });
            }
        }
        Stmt::Loop { bound, body } => {
            for b in list_variants(body) {
                out.push(Stmt::Loop { bound: *bound, body: b });
            }
        }
        Stmt::If { cond, threshold, then, otherwise } => {
            for t in list_variants(then) {
                let (c, o) = (cond.clone(), otherwise.clone());
                out.push(Stmt::If { cond: c, threshold: *threshold, then: t, otherwise: o });
            }
            for o in list_variants(otherwise) {
                let (c, t) = (cond.clone(), then.clone());
                out.push(Stmt::If { cond: c, threshold: *threshold, then: t, otherwise: o });
            }
            for c in expr_variants(cond) {
                let (t, o) = (then.clone(), otherwise.clone());
                out.push(Stmt::If { cond: c, threshold: *threshold, then: t, otherwise: o });
            }
        }
        Stmt::CallArray { helper, dst, src, scale } => {
            for c in expr_variants(scale) {
                let (d, s) = (dst.clone(), src.clone());
                out.push(Stmt::CallArray { helper: *helper, dst: d, src: s, scale: c });
            }
        }
        Stmt::CallStruct { helper, param, scale } => {
            for c in expr_variants(scale) {
                out.push(Stmt::CallStruct { helper: *helper, param: *param, scale: c });
            }
        }
    }
    out
}

/// Statement lists one step smaller: an element removed, a branch spliced in place of its
/// `if`, or one element simplified.
fn list_variants(list: &[Stmt]) -> Vec<Vec<Stmt>> {
    let mut out = Vec::new();
    for k in 0..list.len() {
        let mut l = list.to_vec();
        l.remove(k);
        out.push(l);
    }
    for (k, s) in list.iter().enumerate() {
        if let Stmt::If { then, otherwise, .. } = s {
            for branch in [then, otherwise] {
                let mut l = list[..k].to_vec();
                l.extend(branch.iter().cloned());
                l.extend(list[k + 1..].iter().cloned());
                out.push(l);
            }
        }
    }
    for (k, s) in list.iter().enumerate() {
        for v in stmt_variants(s) {
            let mut l = list.to_vec();
            l[k] = v;
            out.push(l);
        }
    }
    out
}

pub fn program_variants(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    if p.requests.len() > 1 {
        for k in 0..p.requests.len() {
            let mut q = p.clone();
            q.requests.remove(k);
            out.push(q);
        }
    }
    for body in list_variants(&p.body) {
        out.push(Program { body, ..p.clone() });
    }
    for ret in expr_variants(&p.ret) {
        out.push(Program { ret, ..p.clone() });
    }
    for (k, l) in p.locals.iter().enumerate() {
        for init in expr_variants(&l.init) {
            let mut q = p.clone();
            q.locals[k].init = init;
            out.push(q);
        }
    }
    for (k, h) in p.helpers.iter().enumerate() {
        for body in expr_variants(&h.body) {
            let mut q = p.clone();
            q.helpers[k].body = body;
            out.push(q);
        }
        if !h.inline {
            let mut q = p.clone();
            q.helpers[k].inline = true;
            out.push(q);
        }
        // A fresh-block helper as the array helper that computes the same (does the bug
        // need the callee's block?), or returning the block instead of storing it to `*out`.
        if let HelperKind::Fresh { op, out: by_arg } = h.kind {
            let mut q = p.clone();
            q.helpers[k].kind = HelperKind::Array(op);
            out.push(q);
            if by_arg {
                let mut q = p.clone();
                q.helpers[k].kind = HelperKind::Fresh { op, out: false };
                out.push(q);
            }
        }
    }
    for (r, req) in p.requests.iter().enumerate() {
        for (k, a) in req.acts.iter().enumerate() {
            if *a == Act::Diff {
                let mut q = p.clone();
                q.requests[r].acts[k] = Act::Const;
                out.push(q);
            }
        }
    }
    out
}

pub struct Shrunk {
    pub program: Program,
    pub finding: Finding,
    pub steps: usize,
    pub tries: usize,
}

/// Shrinks `program`, which fails with `finding`, for at most `budget`.
pub fn shrink(
    tools: &Tools,
    program: &Program,
    finding: &Finding,
    dir: &Path,
    budget: Duration,
) -> Shrunk {
    let start = Instant::now();
    let mut best =
        Shrunk { program: program.clone(), finding: finding.clone(), steps: 0, tries: 0 };
    'outer: while start.elapsed() < budget {
        for candidate in program_variants(&best.program) {
            if start.elapsed() >= budget {
                break 'outer;
            }
            best.tries += 1;
            let Ok(Verdict::Fail(found)) =
                check(tools, &candidate, dir, &reproducing(&finding.config))
            else {
                continue;
            };
            if let Some(f) = found.into_iter().find(|f| f.same_as(finding)) {
                best.program = candidate;
                best.finding = f;
                best.steps += 1;
                continue 'outer;
            }
        }
        break;
    }
    best
}
