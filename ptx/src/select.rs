//! Instruction selection: one IR instruction (other than terminators) to PTX lines.
//!
//! PTX requires explicit rounding on IEEE operations it would otherwise relax:
//! `div.rn`, `sqrt.rn`, `fma.rn`, `cvt.rn` (int to float, narrowing), `cvt.rzi` (float to
//! int, which saturates and maps NaN to 0 exactly as adc's IR defines). Float `add`,
//! `sub` and `mul` carry `.rn` unless the instruction has the `contract` flag, so ptxas
//! fuses into FMAs only where the source allowed it. `i8` values live in 16-bit
//! registers; instructions that read their high bits normalize them first.

use adc_ir::{
    AtomicRmwOp, BinaryOp, CastOp, Constant, FloatCC, Inst, InstFlags, InstructionData, IntCC,
    Ordering, Symbol, Type, UnaryOp, Value,
};

use crate::function::{mov_type, param_type, FunctionEmitter};
use crate::module::global_state_space;
use crate::registers::{symbol_name, RegClass};
use crate::PtxError;
use adc_ir::nvvm::{memory_barrier, Barrier, SpecialRegister, WarpOp};

/// `s32`/`u32`-style type of an integer register operand.
fn int_type(ty: &Type, signed: bool) -> Option<&'static str> {
    Some(match (ty, signed) {
        (Type::I8 | Type::I16, true) => "s16",
        (Type::I8 | Type::I16, false) => "u16",
        (Type::I32, true) => "s32",
        (Type::I32, false) => "u32",
        (Type::I64 | Type::Ptr(_), true) => "s64",
        (Type::I64 | Type::Ptr(_), false) => "u64",
        _ => return None,
    })
}

/// `b16`/`b32`/`b64` for integers, pointers and floats.
fn bits_type(ty: &Type) -> Option<&'static str> {
    Some(match ty {
        Type::I8 | Type::I16 => "b16",
        Type::I32 | Type::F32 => "b32",
        Type::I64 | Type::Ptr(_) | Type::F64 => "b64",
        _ => return None,
    })
}

fn float_type(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::F32 => Some("f32"),
        Type::F64 => Some("f64"),
        _ => None,
    }
}

/// The memory type of a load/store of `ty` (`i1` is stored as a byte).
fn memory_type(ty: &Type) -> Option<&'static str> {
    Some(match ty {
        Type::I1 | Type::I8 => "u8",
        Type::I16 => "u16",
        Type::I32 => "u32",
        Type::I64 | Type::Ptr(_) => "u64",
        Type::F32 => "f32",
        Type::F64 => "f64",
        _ => return None,
    })
}

/// The state-space qualifier of an access through a pointer in `space` ("" = generic).
fn access_space(space: u32) -> Option<&'static str> {
    match space {
        0 => Some(""),
        1 => Some(".global"),
        3 => Some(".shared"),
        4 => Some(".const"),
        5 => Some(".local"),
        _ => None,
    }
}

/// The `cvta` space name of NVPTX address space `space`.
fn cvta_space(space: u32) -> Option<&'static str> {
    match space {
        1 => Some("global"),
        3 => Some("shared"),
        4 => Some("const"),
        5 => Some("local"),
        _ => None,
    }
}

/// Integer width in bits of the register-sized operand (`i8` counts as 8).
fn width(ty: &Type) -> u32 {
    ty.scalar_bits().unwrap_or(64)
}

impl FunctionEmitter<'_> {
    pub fn select(&mut self, inst: Inst, data: &InstructionData) -> Result<(), PtxError> {
        use InstructionData as I;
        let result = self.func.dfg.inst_result(inst);
        match data {
            I::Const { ty, value } => {
                let dst = self.result_reg(inst, result)?;
                self.constant(inst, &dst, ty, value)
            }
            I::Unary { op, arg, .. } => {
                let dst = self.result_reg(inst, result)?;
                self.unary(inst, *op, &dst, *arg)
            }
            I::Binary { op, flags, args } => {
                let dst = self.result_reg(inst, result)?;
                self.binary(inst, *op, *flags, &dst, args[0], args[1])
            }
            I::Fma { args, .. } => {
                let dst = self.result_reg(inst, result)?;
                let ty = self.value_type(args[0]).clone();
                let ft = float_type(&ty)
                    .ok_or_else(|| self.unsupported(inst, format!("fma on {ty}")))?;
                let [a, b, c] =
                    [self.reg(args[0], inst)?, self.reg(args[1], inst)?, self.reg(args[2], inst)?];
                self.line(format!("fma.rn.{ft} {dst}, {a}, {b}, {c};"));
                Ok(())
            }
            I::Icmp { cond, args } => {
                let dst = self.result_reg(inst, result)?;
                self.icmp(inst, *cond, &dst, args[0], args[1])
            }
            I::Fcmp { cond, args, .. } => {
                let dst = self.result_reg(inst, result)?;
                self.fcmp(inst, *cond, &dst, args[0], args[1])
            }
            I::Select { args, .. } => {
                let dst = self.result_reg(inst, result)?;
                let ty = self.value_type(args[1]).clone();
                let [c, a, b] =
                    [self.reg(args[0], inst)?, self.reg(args[1], inst)?, self.reg(args[2], inst)?];
                if ty == Type::I1 {
                    self.line(format!("@{c} mov.pred {dst}, {a};"));
                    self.line(format!("@!{c} mov.pred {dst}, {b};"));
                } else {
                    let bt = bits_type(&ty)
                        .ok_or_else(|| self.unsupported(inst, format!("select of {ty}")))?;
                    self.line(format!("selp.{bt} {dst}, {a}, {b}, {c};"));
                }
                Ok(())
            }
            I::Cast { op, arg, ty } => {
                let dst = self.result_reg(inst, result)?;
                self.cast(inst, *op, &dst, *arg, ty)
            }
            I::Alloca { ty, count, align } => {
                let dst = self.result_reg(inst, result)?;
                let count = match count {
                    None => 1,
                    Some(v) => self.constant_int(*v).ok_or_else(|| {
                        self.unsupported(inst, "alloca with a count that is not a constant")
                    })?,
                };
                let size = (ty.size() as u128 * count).max(1);
                let align = (*align).max(ty.align() as u32).max(1);
                let name = format!("__local_{}", inst.as_u32());
                self.locals.push_str(&format!("\t.local .align {align} .b8 {name}[{size}];\n"));
                self.line(format!("mov.u64 {dst}, {name};"));
                self.line(format!("cvta.local.u64 {dst}, {dst};"));
                Ok(())
            }
            I::Load { ty, ptr, volatile, .. } => {
                let dst = self.result_reg(inst, result)?;
                let mt = memory_type(ty)
                    .ok_or_else(|| self.unsupported(inst, format!("load of {ty}")))?;
                let (space, addr) = self.access(inst, *ptr)?;
                let vol = if *volatile { ".volatile" } else { "" };
                if *ty == Type::I1 {
                    let byte = self.regs.fresh(RegClass::B16);
                    self.line(format!("ld{vol}{space}.u8 {byte}, [{addr}];"));
                    self.line(format!("and.b16 {byte}, {byte}, 1;"));
                    self.line(format!("setp.ne.u16 {dst}, {byte}, 0;"));
                } else {
                    self.line(format!("ld{vol}{space}.{mt} {dst}, [{addr}];"));
                }
                Ok(())
            }
            I::Store { value, ptr, volatile, .. } => {
                let ty = self.value_type(*value).clone();
                let mt = memory_type(&ty)
                    .ok_or_else(|| self.unsupported(inst, format!("store of {ty}")))?;
                let (space, addr) = self.access(inst, *ptr)?;
                let mut src = self.reg(*value, inst)?;
                let vol = if *volatile { ".volatile" } else { "" };
                if ty == Type::I1 {
                    let byte = self.regs.fresh(RegClass::B16);
                    self.line(format!("selp.u16 {byte}, 1, 0, {src};"));
                    src = byte;
                }
                self.line(format!("st{vol}{space}.{mt} [{addr}], {src};"));
                Ok(())
            }
            I::PtrAdd { ptr, offset, .. } => {
                let dst = self.result_reg(inst, result)?;
                let (p, o) = (self.reg(*ptr, inst)?, self.reg(*offset, inst)?);
                if self.value_type(*offset) != &Type::I64 {
                    return Err(self.unsupported(inst, "ptradd offset must be i64"));
                }
                self.line(format!("add.s64 {dst}, {p}, {o};"));
                Ok(())
            }
            I::Call { callee, args, .. } => self.call(inst, result, *callee, args),
            I::ExtractValue { aggregate, indices } => {
                let dst = self.result_reg(inst, result)?;
                let Some((value, flag)) = self.pairs.get(aggregate).cloned() else {
                    return Err(self.unsupported(
                        inst,
                        "aggregates live in registers only as cmpxchg results",
                    ));
                };
                let class = RegClass::of(self.value_type(result.unwrap_or(*aggregate)));
                match (indices.as_slice(), class) {
                    ([0], Some(class)) => {
                        self.line(format!("mov{} {dst}, {value};", mov_type(class)))
                    }
                    ([1], _) => self.line(format!("mov.pred {dst}, {flag};")),
                    _ => return Err(self.unsupported(inst, "cmpxchg results have fields 0 and 1")),
                }
                Ok(())
            }
            I::AtomicRmw { op, ptr, value, ordering, .. } => {
                self.atomic_rmw(inst, result, *op, *ptr, *value, *ordering)
            }
            I::CmpXchg { ptr, expected, new, success, .. } => {
                let ty = self.value_type(*expected).clone();
                let bt = match ty {
                    Type::I32 => "b32",
                    Type::I64 | Type::Ptr(_) => "b64",
                    other => return Err(self.unsupported(inst, format!("cmpxchg of {other}"))),
                };
                let class = RegClass::of(&ty).unwrap_or(RegClass::B64);
                let space = self.pointer_space(inst, *ptr)?;
                let (addr, e, n) =
                    (self.reg(*ptr, inst)?, self.reg(*expected, inst)?, self.reg(*new, inst)?);
                let old = self.regs.fresh(class);
                let flag = self.regs.fresh(RegClass::Pred);
                let sem = atomic_semantics(*success);
                self.line(format!("atom{sem}{space}.cas.{bt} {old}, [{addr}], {e}, {n};"));
                self.line(format!("setp.eq.{bt} {flag}, {old}, {e};"));
                if let Some(result) = result {
                    self.pairs.insert(result, (old, flag));
                }
                Ok(())
            }
            I::Fence { ordering } => {
                let sem = match ordering {
                    Ordering::SeqCst => "sc",
                    _ => "acq_rel",
                };
                self.line(format!("fence.{sem}.sys;"));
                Ok(())
            }
            I::MemCopy { .. } | I::MemSet { .. } => {
                Err(self.unsupported(inst, "memory intrinsics are not lowered to PTX loops yet"))
            }
            I::CallIndirect { .. } => Err(self.unsupported(inst, "indirect calls")),
            I::ExtractLane { .. }
            | I::InsertLane { .. }
            | I::Shuffle { .. }
            | I::Reduce { .. }
            | I::InsertValue { .. } => {
                Err(self.unsupported(inst, "vectors and aggregates have no PTX registers here"))
            }
            I::Jump { .. }
            | I::Brif { .. }
            | I::Switch { .. }
            | I::Return { .. }
            | I::Unreachable => Err(self.unsupported(inst, "terminator in the middle of a block")),
        }
    }

    fn result_reg(&mut self, inst: Inst, result: Option<Value>) -> Result<String, PtxError> {
        let value = result.ok_or_else(|| self.unsupported(inst, "instruction has no result"))?;
        self.reg(value, inst)
    }

    /// The value of an integer `const`, when `value` is one.
    fn constant_int(&self, value: Value) -> Option<u128> {
        match self.func.dfg.value_def(value) {
            adc_ir::ValueDef::Result(def) => match self.func.inst(def) {
                InstructionData::Const { value: Constant::Int(v), .. } => Some(*v),
                _ => None,
            },
            adc_ir::ValueDef::Param(..) => None,
        }
    }

    /// The state space and address register of an access through `ptr`: a generic pointer
    /// known to point to global memory is converted (`cvta.to.global`) and accessed as
    /// `.global`.
    fn access(&mut self, inst: Inst, ptr: Value) -> Result<(&'static str, String), PtxError> {
        let space = self.pointer_space(inst, ptr)?;
        let addr = self.reg(ptr, inst)?;
        if space.is_empty() && self.global_pointers.contains(&ptr) {
            let global = self.regs.fresh(RegClass::B64);
            self.line(format!("cvta.to.global.u64 {global}, {addr};"));
            return Ok((".global", global));
        }
        Ok((space, addr))
    }

    fn pointer_space(&self, inst: Inst, ptr: Value) -> Result<&'static str, PtxError> {
        match self.value_type(ptr) {
            Type::Ptr(space) => access_space(*space).ok_or_else(|| {
                self.unsupported(inst, format!("address space {space} has no PTX state space"))
            }),
            other => Err(self.unsupported(inst, format!("address of type {other}"))),
        }
    }

    fn constant(
        &mut self,
        inst: Inst,
        dst: &str,
        ty: &Type,
        value: &Constant,
    ) -> Result<(), PtxError> {
        let zeroish = matches!(value, Constant::Zero | Constant::Undef | Constant::Poison);
        match (ty, value) {
            (Type::I1, _) => {
                let bit = matches!(value, Constant::Int(1));
                // PTX has no predicate immediates: compare two equal/different constants.
                let cond = if bit { "eq" } else { "ne" };
                self.line(format!("setp.{cond}.u32 {dst}, 0, 0;"));
            }
            (Type::F32, Constant::Float(bits)) => {
                self.line(format!("mov.b32 {dst}, 0f{:08X};", *bits as u32));
            }
            (Type::F64, Constant::Float(bits)) => {
                self.line(format!("mov.b64 {dst}, 0d{bits:016X};"));
            }
            (Type::F32, _) if zeroish => self.line(format!("mov.b32 {dst}, 0f00000000;")),
            (Type::F64, _) if zeroish => self.line(format!("mov.b64 {dst}, 0d0000000000000000;")),
            (Type::Ptr(space), Constant::Address { symbol: Symbol::Global(g), offset }) => {
                let global = &self.module.globals[*g];
                let name = symbol_name(&global.name);
                let home = if global.addr_space == 0 { 1 } else { global.addr_space };
                if global_state_space(global.addr_space).is_none() {
                    return Err(self.unsupported(inst, "global in an unknown address space"));
                }
                self.line(format!("mov.u64 {dst}, {name};"));
                if *space == 0 {
                    let cvta = cvta_space(home).unwrap_or("global");
                    self.line(format!("cvta.{cvta}.u64 {dst}, {dst};"));
                } else if *space != home {
                    return Err(self.unsupported(
                        inst,
                        format!(
                            "address of @{} (space {home}) as a space-{space} pointer",
                            global.name
                        ),
                    ));
                }
                if *offset != 0 {
                    self.line(format!("add.s64 {dst}, {dst}, {offset};"));
                }
            }
            (Type::Ptr(_), Constant::Address { symbol: Symbol::Func(_), .. }) => {
                return Err(self.unsupported(inst, "function addresses (indirect calls)"));
            }
            (t, Constant::Int(v)) if bits_type(t).is_some() => {
                let bt = bits_type(t).unwrap_or("b64");
                self.line(format!("mov.{bt} {dst}, {v};"));
            }
            (t, _) if zeroish && bits_type(t).is_some() => {
                let bt = bits_type(t).unwrap_or("b64");
                self.line(format!("mov.{bt} {dst}, 0;"));
            }
            (t, v) => return Err(self.unsupported(inst, format!("constant {v:?} of type {t}"))),
        }
        Ok(())
    }

    /// A copy of an `i8` register with its high byte made consistent (sign- or
    /// zero-extended); other registers are returned as they are.
    fn normalized(&mut self, reg: &str, ty: &Type, signed: bool) -> String {
        if *ty != Type::I8 {
            return reg.to_string();
        }
        let t = self.regs.fresh(RegClass::B16);
        let conv = if signed { "cvt.s16.s8" } else { "cvt.u16.u8" };
        self.line(format!("{conv} {t}, {reg};"));
        t
    }

    fn unary(&mut self, inst: Inst, op: UnaryOp, dst: &str, arg: Value) -> Result<(), PtxError> {
        let ty = self.value_type(arg).clone();
        let a = self.reg(arg, inst)?;
        let bad = |s: &Self| s.unsupported(inst, format!("{} on {ty}", op.name()));
        if op.is_float() {
            let ft = float_type(&ty).ok_or_else(|| bad(self))?;
            let text = match op {
                UnaryOp::Fneg => format!("neg.{ft} {dst}, {a};"),
                UnaryOp::Fabs => format!("abs.{ft} {dst}, {a};"),
                UnaryOp::Sqrt => format!("sqrt.rn.{ft} {dst}, {a};"),
                UnaryOp::Floor => format!("cvt.rmi.{ft}.{ft} {dst}, {a};"),
                UnaryOp::Ceil => format!("cvt.rpi.{ft}.{ft} {dst}, {a};"),
                UnaryOp::Ftrunc => format!("cvt.rzi.{ft}.{ft} {dst}, {a};"),
                UnaryOp::Roundeven => format!("cvt.rni.{ft}.{ft} {dst}, {a};"),
                _ => {
                    // Round half away from zero: trunc, then step away from zero when the
                    // dropped fraction (exact: x - trunc(x)) is at least one half.
                    let class = RegClass::of(&ty).unwrap_or(RegClass::F64);
                    let (t, frac, step) =
                        (self.regs.fresh(class), self.regs.fresh(class), self.regs.fresh(class));
                    let p = self.regs.fresh(RegClass::Pred);
                    let (half, one) = if ty == Type::F32 {
                        ("0f3F000000", "0f3F800000")
                    } else {
                        ("0d3FE0000000000000", "0d3FF0000000000000")
                    };
                    self.line(format!("cvt.rzi.{ft}.{ft} {t}, {a};"));
                    self.line(format!("sub.rn.{ft} {frac}, {a}, {t};"));
                    self.line(format!("abs.{ft} {frac}, {frac};"));
                    self.line(format!("setp.ge.{ft} {p}, {frac}, {half};"));
                    self.line(format!("mov.{ft} {step}, {one};"));
                    self.line(format!("copysign.{ft} {step}, {a}, {step};"));
                    self.line(format!("add.rn.{ft} {step}, {t}, {step};"));
                    format!("selp.{ft} {dst}, {step}, {t}, {p};")
                }
            };
            self.line(text);
            return Ok(());
        }
        if op == UnaryOp::Freeze {
            let class = RegClass::of(&ty).ok_or_else(|| bad(self))?;
            self.line(format!("mov{} {dst}, {a};", mov_type(class)));
            return Ok(());
        }
        let bits = match ty {
            Type::I32 => 32,
            Type::I64 => 64,
            _ => return Err(bad(self)),
        };
        let bt = if bits == 32 { "b32" } else { "b64" };
        match op {
            UnaryOp::Iabs => self.line(format!("abs.s{bits} {dst}, {a};")),
            UnaryOp::Bitreverse => self.line(format!("brev.{bt} {dst}, {a};")),
            UnaryOp::Ctpop | UnaryOp::Ctlz | UnaryOp::Cttz => {
                let mut source = a.clone();
                if op == UnaryOp::Cttz {
                    source = self.regs.fresh(RegClass::of(&ty).unwrap_or(RegClass::B64));
                    self.line(format!("brev.{bt} {source}, {a};"));
                }
                let name = if op == UnaryOp::Ctpop { "popc" } else { "clz" };
                if bits == 32 {
                    self.line(format!("{name}.{bt} {dst}, {source};"));
                } else {
                    let count = self.regs.fresh(RegClass::B32);
                    self.line(format!("{name}.{bt} {count}, {source};"));
                    self.line(format!("cvt.u64.u32 {dst}, {count};"));
                }
            }
            UnaryOp::Bswap if bits == 32 => {
                self.line(format!("prmt.b32 {dst}, {a}, 0, 0x0123;"));
            }
            UnaryOp::Bswap => {
                let (lo, hi) = (self.regs.fresh(RegClass::B32), self.regs.fresh(RegClass::B32));
                self.line(format!("mov.b64 {{{lo}, {hi}}}, {a};"));
                self.line(format!("prmt.b32 {lo}, {lo}, 0, 0x0123;"));
                self.line(format!("prmt.b32 {hi}, {hi}, 0, 0x0123;"));
                self.line(format!("mov.b64 {dst}, {{{hi}, {lo}}};"));
            }
            _ => return Err(bad(self)),
        }
        Ok(())
    }

    fn binary(
        &mut self,
        inst: Inst,
        op: BinaryOp,
        flags: InstFlags,
        dst: &str,
        lhs: Value,
        rhs: Value,
    ) -> Result<(), PtxError> {
        let ty = self.value_type(lhs).clone();
        let (a, b) = (self.reg(lhs, inst)?, self.reg(rhs, inst)?);
        let bad = |s: &Self| s.unsupported(inst, format!("{} on {ty}", op.name()));
        if op.is_float() {
            let ft = float_type(&ty).ok_or_else(|| bad(self))?;
            // Without `contract`, `.rn` keeps ptxas from fusing into an FMA.
            let rn = if flags.contains(InstFlags::CONTRACT) { "" } else { ".rn" };
            let text = match op {
                BinaryOp::Fadd => format!("add{rn}.{ft} {dst}, {a}, {b};"),
                BinaryOp::Fsub => format!("sub{rn}.{ft} {dst}, {a}, {b};"),
                BinaryOp::Fmul => format!("mul{rn}.{ft} {dst}, {a}, {b};"),
                BinaryOp::Fdiv => format!("div.rn.{ft} {dst}, {a}, {b};"),
                BinaryOp::Fminnum => format!("min.{ft} {dst}, {a}, {b};"),
                BinaryOp::Fmaxnum => format!("max.{ft} {dst}, {a}, {b};"),
                // PTX copysign takes the sign from its first operand.
                BinaryOp::Copysign => format!("copysign.{ft} {dst}, {b}, {a};"),
                _ => return Err(self.unsupported(inst, "frem has no PTX instruction")),
            };
            self.line(text);
            return Ok(());
        }
        if ty == Type::I1 {
            let text = match op {
                BinaryOp::And | BinaryOp::Umin | BinaryOp::Smax | BinaryOp::Mul => "and",
                BinaryOp::Or | BinaryOp::Umax | BinaryOp::Smin => "or",
                BinaryOp::Xor | BinaryOp::Add | BinaryOp::Sub => "xor",
                _ => return Err(bad(self)),
            };
            self.line(format!("{text}.pred {dst}, {a}, {b};"));
            return Ok(());
        }
        let (st, ut, bt) = match (int_type(&ty, true), int_type(&ty, false), bits_type(&ty)) {
            (Some(s), Some(u), Some(b)) if !ty.is_float() => (s, u, b),
            _ => return Err(bad(self)),
        };
        let bits = width(&ty);
        let signed_op = matches!(
            op,
            BinaryOp::Sdiv | BinaryOp::Srem | BinaryOp::Ashr | BinaryOp::Smin | BinaryOp::Smax
        );
        let unsigned_op = matches!(
            op,
            BinaryOp::Udiv | BinaryOp::Urem | BinaryOp::Lshr | BinaryOp::Umin | BinaryOp::Umax
        );
        let (a, b) = if signed_op || unsigned_op {
            let a = self.normalized(&a, &ty, signed_op);
            let is_shift = matches!(op, BinaryOp::Ashr | BinaryOp::Lshr);
            let b = if is_shift { b } else { self.normalized(&b, &ty, signed_op) };
            (a, b)
        } else {
            (a, b)
        };
        let text = match op {
            BinaryOp::Add => format!("add.{st} {dst}, {a}, {b};"),
            BinaryOp::Sub => format!("sub.{st} {dst}, {a}, {b};"),
            BinaryOp::Mul => format!("mul.lo.{st} {dst}, {a}, {b};"),
            BinaryOp::Sdiv => format!("div.{st} {dst}, {a}, {b};"),
            BinaryOp::Udiv => format!("div.{ut} {dst}, {a}, {b};"),
            BinaryOp::Srem => format!("rem.{st} {dst}, {a}, {b};"),
            BinaryOp::Urem => format!("rem.{ut} {dst}, {a}, {b};"),
            BinaryOp::And => format!("and.{bt} {dst}, {a}, {b};"),
            BinaryOp::Or => format!("or.{bt} {dst}, {a}, {b};"),
            BinaryOp::Xor => format!("xor.{bt} {dst}, {a}, {b};"),
            BinaryOp::Smin => format!("min.{st} {dst}, {a}, {b};"),
            BinaryOp::Smax => format!("max.{st} {dst}, {a}, {b};"),
            BinaryOp::Umin => format!("min.{ut} {dst}, {a}, {b};"),
            BinaryOp::Umax => format!("max.{ut} {dst}, {a}, {b};"),
            BinaryOp::Shl | BinaryOp::Lshr | BinaryOp::Ashr => {
                // adc takes shift amounts modulo the width; PTX clamps them, so mask.
                let amount = self.regs.fresh(RegClass::B32);
                match ty {
                    Type::I64 => self.line(format!("cvt.u32.u64 {amount}, {b};")),
                    Type::I32 => self.line(format!("mov.b32 {amount}, {b};")),
                    _ => self.line(format!("cvt.u32.u16 {amount}, {b};")),
                }
                self.line(format!("and.b32 {amount}, {amount}, {};", bits - 1));
                match op {
                    BinaryOp::Shl => format!("shl.{bt} {dst}, {a}, {amount};"),
                    BinaryOp::Lshr => format!("shr.{ut} {dst}, {a}, {amount};"),
                    _ => format!("shr.{st} {dst}, {a}, {amount};"),
                }
            }
            _ => return Err(bad(self)),
        };
        self.line(text);
        Ok(())
    }

    fn icmp(
        &mut self,
        inst: Inst,
        cond: IntCC,
        dst: &str,
        lhs: Value,
        rhs: Value,
    ) -> Result<(), PtxError> {
        let ty = self.value_type(lhs).clone();
        let (a, b) = (self.reg(lhs, inst)?, self.reg(rhs, inst)?);
        if ty == Type::I1 {
            match cond {
                IntCC::Eq => {
                    self.line(format!("xor.pred {dst}, {a}, {b};"));
                    self.line(format!("not.pred {dst}, {dst};"));
                }
                IntCC::Ne => self.line(format!("xor.pred {dst}, {a}, {b};")),
                _ => return Err(self.unsupported(inst, format!("icmp {cond} on i1"))),
            }
            return Ok(());
        }
        let signed = matches!(cond, IntCC::Sgt | IntCC::Sge | IntCC::Slt | IntCC::Sle);
        let it =
            int_type(&ty, signed).ok_or_else(|| self.unsupported(inst, format!("icmp on {ty}")))?;
        let (a, b) = (self.normalized(&a, &ty, signed), self.normalized(&b, &ty, signed));
        let cmp = match cond {
            IntCC::Eq => "eq",
            IntCC::Ne => "ne",
            IntCC::Ugt => "hi",
            IntCC::Uge => "hs",
            IntCC::Ult => "lo",
            IntCC::Ule => "ls",
            IntCC::Sgt => "gt",
            IntCC::Sge => "ge",
            IntCC::Slt => "lt",
            IntCC::Sle => "le",
        };
        self.line(format!("setp.{cmp}.{it} {dst}, {a}, {b};"));
        Ok(())
    }

    fn fcmp(
        &mut self,
        inst: Inst,
        cond: FloatCC,
        dst: &str,
        lhs: Value,
        rhs: Value,
    ) -> Result<(), PtxError> {
        let ty = self.value_type(lhs).clone();
        let ft = float_type(&ty).ok_or_else(|| self.unsupported(inst, format!("fcmp on {ty}")))?;
        let (a, b) = (self.reg(lhs, inst)?, self.reg(rhs, inst)?);
        let cmp = match cond {
            FloatCC::False => {
                self.line(format!("setp.ne.u32 {dst}, 0, 0;"));
                return Ok(());
            }
            FloatCC::True => {
                self.line(format!("setp.eq.u32 {dst}, 0, 0;"));
                return Ok(());
            }
            FloatCC::Oeq => "eq",
            FloatCC::Ogt => "gt",
            FloatCC::Oge => "ge",
            FloatCC::Olt => "lt",
            FloatCC::Ole => "le",
            FloatCC::One => "ne",
            FloatCC::Ord => "num",
            FloatCC::Ueq => "equ",
            FloatCC::Ugt => "gtu",
            FloatCC::Uge => "geu",
            FloatCC::Ult => "ltu",
            FloatCC::Ule => "leu",
            FloatCC::Une => "neu",
            FloatCC::Uno => "nan",
        };
        self.line(format!("setp.{cmp}.{ft} {dst}, {a}, {b};"));
        Ok(())
    }

    fn cast(
        &mut self,
        inst: Inst,
        op: CastOp,
        dst: &str,
        arg: Value,
        to: &Type,
    ) -> Result<(), PtxError> {
        let from = self.value_type(arg).clone();
        let a = self.reg(arg, inst)?;
        let bad = |s: &Self| s.unsupported(inst, format!("{} from {from} to {to}", op.name()));
        // The cvt type of an integer, by its real width (i8 included).
        let cvt_int = |ty: &Type, signed: bool| -> Option<String> {
            let bits = ty.int_bits().filter(|b| (8..=64).contains(b))?;
            Some(format!("{}{bits}", if signed { "s" } else { "u" }))
        };
        match op {
            CastOp::Zext | CastOp::Sext | CastOp::Trunc if from == Type::I1 || *to == Type::I1 => {
                if *to == Type::I1 {
                    // trunc to i1: the lowest bit.
                    let bt = bits_type(&from).ok_or_else(|| bad(self))?;
                    let t = self.regs.fresh(RegClass::of(&from).ok_or_else(|| bad(self))?);
                    self.line(format!("and.{bt} {t}, {a}, 1;"));
                    self.line(format!("setp.ne.{bt} {dst}, {t}, 0;"));
                } else {
                    let it = int_type(to, true).ok_or_else(|| bad(self))?;
                    let ones = if op == CastOp::Sext { "-1" } else { "1" };
                    self.line(format!("selp.{it} {dst}, {ones}, 0, {a};"));
                }
            }
            CastOp::Zext | CastOp::Sext | CastOp::Trunc => {
                let signed = op == CastOp::Sext;
                let src = cvt_int(&from, signed).ok_or_else(|| bad(self))?;
                // Destination typed by its register (i8 lives in 16 bits).
                let dst_t = int_type(to, signed).ok_or_else(|| bad(self))?;
                if from.int_bits() == Some(16) && to.int_bits() == Some(8) {
                    self.line(format!("mov.b16 {dst}, {a};"));
                } else {
                    self.line(format!("cvt.{dst_t}.{src} {dst}, {a};"));
                }
            }
            CastOp::Fptosi | CastOp::Fptoui => {
                let ft = float_type(&from).ok_or_else(|| bad(self))?;
                let it = cvt_int(to, op == CastOp::Fptosi).ok_or_else(|| bad(self))?;
                if *to == Type::I8 {
                    // Saturate to the 8-bit range in a 32-bit register, then narrow.
                    let wide = self.regs.fresh(RegClass::B32);
                    let signed = op == CastOp::Fptosi;
                    let it32 = if signed { "s32" } else { "u32" };
                    self.line(format!("cvt.rzi.{it32}.{ft} {wide}, {a};"));
                    let (lo, hi) = if signed { ("-128", "127") } else { ("0", "255") };
                    self.line(format!("max.{it32} {wide}, {wide}, {lo};"));
                    self.line(format!("min.{it32} {wide}, {wide}, {hi};"));
                    self.line(format!("cvt.u16.u32 {dst}, {wide};"));
                } else {
                    self.line(format!("cvt.rzi.{it}.{ft} {dst}, {a};"));
                }
            }
            CastOp::Sitofp | CastOp::Uitofp => {
                let ft = float_type(to).ok_or_else(|| bad(self))?;
                let signed = op == CastOp::Sitofp;
                if from == Type::I1 {
                    let one = if signed { "-1" } else { "1" };
                    let t = self.regs.fresh(RegClass::B32);
                    self.line(format!("selp.s32 {t}, {one}, 0, {a};"));
                    self.line(format!("cvt.rn.{ft}.s32 {dst}, {t};"));
                } else {
                    let it = cvt_int(&from, signed).ok_or_else(|| bad(self))?;
                    self.line(format!("cvt.rn.{ft}.{it} {dst}, {a};"));
                }
            }
            CastOp::Fpext if from == Type::F32 && *to == Type::F64 => {
                self.line(format!("cvt.f64.f32 {dst}, {a};"));
            }
            CastOp::Fptrunc if from == Type::F64 && *to == Type::F32 => {
                self.line(format!("cvt.rn.f32.f64 {dst}, {a};"));
            }
            CastOp::Bitcast | CastOp::Ptrtoint | CastOp::Inttoptr => {
                let (fb, tb) = (bits_type(&from), bits_type(to));
                match (fb, tb) {
                    (Some(f), Some(t)) if f == t && from != Type::I8 && *to != Type::I8 => {
                        self.line(format!("mov.{t} {dst}, {a};"));
                    }
                    (Some("b64"), Some(_)) if op == CastOp::Ptrtoint => {
                        let it = int_type(to, false).ok_or_else(|| bad(self))?;
                        self.line(format!("cvt.{it}.u64 {dst}, {a};"));
                    }
                    (Some(_), Some("b64")) if op == CastOp::Inttoptr => {
                        let it = cvt_int(&from, false).ok_or_else(|| bad(self))?;
                        self.line(format!("cvt.u64.{it} {dst}, {a};"));
                    }
                    _ => return Err(bad(self)),
                }
            }
            CastOp::Addrspacecast => {
                let (Type::Ptr(src), Type::Ptr(dst_space)) = (&from, to) else {
                    return Err(bad(self));
                };
                match (*src, *dst_space) {
                    (s, d) if s == d => self.line(format!("mov.b64 {dst}, {a};")),
                    (s, 0) => {
                        let space = cvta_space(s).ok_or_else(|| bad(self))?;
                        self.line(format!("cvta.{space}.u64 {dst}, {a};"));
                    }
                    (0, d) => {
                        let space = cvta_space(d).ok_or_else(|| bad(self))?;
                        self.line(format!("cvta.to.{space}.u64 {dst}, {a};"));
                    }
                    _ => return Err(bad(self)),
                }
            }
            _ => return Err(bad(self)),
        }
        Ok(())
    }

    /// `activemask.b32`, `shfl.sync.<mode>.b32 d, a, b, c, mask` and
    /// `vote.sync.all.pred d, p, mask` (operands in LLVM's order: mask first).
    fn warp_op(
        &mut self,
        inst: Inst,
        result: Option<Value>,
        op: WarpOp,
        args: &[Value],
    ) -> Result<(), PtxError> {
        let value = result.ok_or_else(|| self.unsupported(inst, "a warp operation's result"))?;
        let dst = self.reg(value, inst)?;
        let ops: Vec<String> = args.iter().map(|a| self.reg(*a, inst)).collect::<Result<_, _>>()?;
        let line = match (op, ops.as_slice()) {
            (WarpOp::ActiveMask, []) => format!("activemask.b32 {dst};"),
            (WarpOp::Shuffle(mode), [mask, a, b, c]) => {
                let mode = WarpOp::shuffle_mode_name(mode);
                format!("shfl.sync.{mode}.b32 {dst}, {a}, {b}, {c}, {mask};")
            }
            (WarpOp::VoteAll, [mask, p]) => format!("vote.sync.all.pred {dst}, {p}, {mask};"),
            _ => return Err(self.unsupported(inst, format!("@{} operands", op.intrinsic()))),
        };
        self.line(line);
        Ok(())
    }

    fn call(
        &mut self,
        inst: Inst,
        result: Option<Value>,
        callee: adc_ir::FuncId,
        args: &[Value],
    ) -> Result<(), PtxError> {
        let target = self
            .module
            .functions
            .get(callee)
            .ok_or_else(|| self.unsupported(inst, "call to a function that does not exist"))?;
        let name = target.name.clone();
        if let Some(sreg) = SpecialRegister::from_intrinsic(&name) {
            let dst = self.result_reg(inst, result)?;
            self.line(format!("mov.u32 {dst}, {};", sreg.ptx()));
            return Ok(());
        }
        match Barrier::from_intrinsic(&name) {
            Some(Barrier::Zero) => {
                self.line("bar.sync 0;");
                return Ok(());
            }
            Some(Barrier::WithId) => {
                let id = args
                    .first()
                    .ok_or_else(|| self.unsupported(inst, "a barrier without an id"))?;
                let id = self.reg(*id, inst)?;
                self.line(format!("bar.sync {id};"));
                return Ok(());
            }
            None => {}
        }
        if let Some(level) = memory_barrier(&name) {
            self.line(format!("membar.{level};"));
            return Ok(());
        }
        if let Some(op) = WarpOp::from_intrinsic(&name) {
            return self.warp_op(inst, result, op, args);
        }
        match name.as_str() {
            _ if self.nvvm_math(inst, result, &name, args)? => return Ok(()),
            _ if name.starts_with("llvm.") => {
                return Err(
                    self.unsupported(inst, format!("intrinsic @{name} has no PTX lowering"))
                );
            }
            _ => {}
        }
        if target.attrs.contains(adc_ir::FuncAttrs::KERNEL) {
            return Err(self.unsupported(inst, format!("kernel @{name} cannot be called")));
        }
        let ret = target.signature.ret.clone();
        let params = target.signature.params.clone();
        if params.len() != args.len() || target.signature.varargs {
            return Err(self.unsupported(inst, "variadic calls or argument count mismatch"));
        }
        self.line("{");
        let mut names = Vec::new();
        for (i, (&arg, ty)) in args.iter().zip(&params).enumerate() {
            let pty = param_type(ty)
                .ok_or_else(|| self.unsupported(inst, format!("argument of type {ty}")))?;
            let pname = format!("param{i}");
            self.line(format!(".param {pty} {pname};"));
            let reg = self.reg(arg, inst)?;
            self.store_param(&pname, ty, &reg);
            names.push(pname);
        }
        let callee_name = symbol_name(&name);
        let list = names.join(", ");
        match (&ret, result) {
            (Some(ty), result) => {
                let pty = param_type(ty)
                    .ok_or_else(|| self.unsupported(inst, format!("return type {ty}")))?;
                self.line(format!(".param {pty} retval0;"));
                self.line(format!("call.uni (retval0), {callee_name}, ({list});"));
                if let Some(result) = result {
                    let dst = self.reg(result, inst)?;
                    if *ty == Type::I1 {
                        let byte = self.regs.fresh(RegClass::B16);
                        self.line(format!("ld.param.u8 {byte}, [retval0];"));
                        self.line(format!("and.b16 {byte}, {byte}, 1;"));
                        self.line(format!("setp.ne.u16 {dst}, {byte}, 0;"));
                    } else {
                        self.line(format!("ld.param{pty} {dst}, [retval0];"));
                    }
                }
            }
            (None, _) => self.line(format!("call.uni {callee_name}, ({list});")),
        }
        self.line("}");
        Ok(())
    }

    fn atomic_rmw(
        &mut self,
        inst: Inst,
        result: Option<Value>,
        op: AtomicRmwOp,
        ptr: Value,
        value: Value,
        ordering: Ordering,
    ) -> Result<(), PtxError> {
        let ty = self.value_type(value).clone();
        let (space, addr) = self.access(inst, ptr)?;
        if space == ".const" || space == ".local" {
            return Err(self.unsupported(inst, "atomics on const or local memory"));
        }
        let mut operand = self.reg(value, inst)?;
        let class =
            RegClass::of(&ty).ok_or_else(|| self.unsupported(inst, format!("atomics on {ty}")))?;
        let bits = match ty {
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 | Type::Ptr(_) => 64,
            _ => return Err(self.unsupported(inst, format!("atomics on {ty}"))),
        };
        // Subtraction is an addition of the negated operand.
        if matches!(op, AtomicRmwOp::Sub | AtomicRmwOp::Fsub) {
            let neg = self.regs.fresh(class);
            let nt = if ty.is_float() {
                float_type(&ty).unwrap_or("f64")
            } else if bits == 32 {
                "s32"
            } else {
                "s64"
            };
            self.line(format!("neg.{nt} {neg}, {operand};"));
            operand = neg;
        }
        let suffix = match (op, ty.is_float()) {
            (AtomicRmwOp::Add | AtomicRmwOp::Sub, false) => format!("add.u{bits}"),
            (AtomicRmwOp::Fadd | AtomicRmwOp::Fsub, true) => format!("add.f{bits}"),
            (AtomicRmwOp::Xchg, _) => format!("exch.b{bits}"),
            (AtomicRmwOp::And, false) => format!("and.b{bits}"),
            (AtomicRmwOp::Or, false) => format!("or.b{bits}"),
            (AtomicRmwOp::Xor, false) => format!("xor.b{bits}"),
            (AtomicRmwOp::Max, false) => format!("max.s{bits}"),
            (AtomicRmwOp::Min, false) => format!("min.s{bits}"),
            (AtomicRmwOp::Umax, false) => format!("max.u{bits}"),
            (AtomicRmwOp::Umin, false) => format!("min.u{bits}"),
            _ => {
                return Err(self.unsupported(inst, format!("atomicrmw {} on {ty}", op.name())));
            }
        };
        let sem = atomic_semantics(ordering);
        let used = result.is_some_and(|r| self.is_used(r));
        // `red` only knows the relaxed and release semantics.
        let red_allowed =
            matches!(ordering, Ordering::Unordered | Ordering::Monotonic | Ordering::Release);
        if used || !red_allowed {
            let dst = match result {
                Some(_) => self.result_reg(inst, result)?,
                None => self.regs.fresh(class),
            };
            self.line(format!("atom{sem}{space}.{suffix} {dst}, [{addr}], {operand};"));
        } else {
            // No one reads the old value: a reduction is cheaper.
            self.line(format!("red{sem}{space}.{suffix} [{addr}], {operand};"));
        }
        Ok(())
    }

    fn is_used(&self, value: Value) -> bool {
        self.func.layout.insts().any(|(_, inst)| self.func.inst(inst).args().contains(&value))
    }
}

/// The `.sem` qualifier of an atomic with this ordering (PTX 6.0+, sm_70+; `.gpu` scope
/// is implied by CUDA's `atomicAdd`-style device atomics).
fn atomic_semantics(ordering: Ordering) -> &'static str {
    match ordering {
        Ordering::Unordered | Ordering::Monotonic => ".relaxed.gpu",
        Ordering::Acquire => ".acquire.gpu",
        Ordering::Release => ".release.gpu",
        Ordering::AcqRel | Ordering::SeqCst => ".acq_rel.gpu",
    }
}
