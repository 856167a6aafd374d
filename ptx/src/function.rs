//! One function: its `.entry` (kernel) or `.func` header with `.param` passing, the copy
//! of parameters into registers, blocks as labels, and control flow. Block parameters
//! are assigned by moves on each incoming edge; a conditional edge that carries
//! arguments gets its own small stub block after the branching block.

use adc_ir::{Block, BlockCall, FuncAttrs, Function, Inst, InstructionData, Module, Type, Value};

use crate::registers::{symbol_name, RegClass, Registers};
use crate::{PtxError, PtxOptions};

/// The `.param` type of a value passed to or returned from a function (scalars only;
/// `i1`/`i8` travel as a byte).
pub fn param_type(ty: &Type) -> Option<&'static str> {
    Some(match ty {
        Type::I1 | Type::I8 => ".b8",
        Type::I16 => ".b16",
        Type::I32 | Type::F32 => ".b32",
        Type::I64 | Type::F64 | Type::Ptr(_) => ".b64",
        _ => return None,
    })
}

fn param_name(func: &Function, index: usize) -> String {
    format!("{}_param_{index}", symbol_name(&func.name))
}

/// `.func (.param .b64 func_retval0) name(.param .b32 name_param_0, ...)` or the `.entry`
/// equivalent, without linkage and without the trailing `;`/body.
pub fn func_prototype(func: &Function) -> Result<String, PtxError> {
    let bad = |what: String| PtxError::Signature { function: func.name.clone(), reason: what };
    if func.signature.varargs {
        return Err(bad("variadic functions cannot be emitted as PTX".to_string()));
    }
    let kernel = func.attrs.contains(FuncAttrs::KERNEL);
    let mut text = String::from(if kernel { ".entry " } else { ".func " });
    if let Some(ret) = &func.signature.ret {
        if kernel {
            return Err(bad(format!("a kernel must return void, not {ret}")));
        }
        let ty = param_type(ret)
            .ok_or_else(|| bad(format!("return type {ret} has no PTX parameter type")))?;
        text.push_str(&format!("(.param {ty} func_retval0) "));
    }
    text.push_str(&symbol_name(&func.name));
    let params: Result<Vec<String>, PtxError> = func
        .signature
        .params
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            let pty = param_type(ty)
                .ok_or_else(|| bad(format!("parameter {i} of type {ty} has no PTX type")))?;
            Ok(format!(".param {pty} {}", param_name(func, i)))
        })
        .collect();
    text.push_str(&format!("({})", params?.join(", ")));
    Ok(text)
}

/// Emits one function's definition.
pub fn emit_function(
    module: &Module,
    func: &Function,
    options: &PtxOptions,
) -> Result<String, PtxError> {
    let header = func_prototype(func)?;
    let linkage = crate::module::linkage_directive(func);
    let linkage = if func.attrs.contains(FuncAttrs::KERNEL) { ".visible " } else { linkage };
    let mut emitter = FunctionEmitter {
        module,
        func,
        options,
        regs: Registers::default(),
        body: String::new(),
        locals: String::new(),
        edge_stubs: String::new(),
        next_label: 0,
        next_block: None,
        pairs: Default::default(),
        global_pointers: crate::address_spaces::global_pointers(func),
    };
    emitter.load_params()?;
    let blocks = func.layout.blocks();
    for (index, &block) in blocks.iter().enumerate() {
        emitter.next_block = blocks.get(index + 1).copied();
        emitter.emit_block(block)?;
    }
    Ok(format!(
        "{linkage}{header}\n{{\n{}{}{}}}\n",
        emitter.locals,
        emitter.regs.declarations(),
        emitter.body
    ))
}

pub struct FunctionEmitter<'a> {
    pub module: &'a Module,
    pub func: &'a Function,
    pub options: &'a PtxOptions,
    pub regs: Registers,
    /// Instructions, in layout order.
    pub body: String,
    /// `.local` declarations (allocas), written before the registers.
    pub locals: String,
    /// Edge blocks of the current block, appended after it.
    edge_stubs: String,
    next_label: u32,
    /// The block laid out after the current one: a jump there falls through, unless edge
    /// stubs are placed in between.
    next_block: Option<Block>,
    /// Results of `cmpxchg` (an `{T, i1}` pair): the registers of both fields, which
    /// `extractvalue` reads.
    pub pairs: std::collections::HashMap<Value, (String, String)>,
    /// Generic pointers known to point to global memory (`address_spaces`).
    pub global_pointers: std::collections::HashSet<Value>,
}

impl FunctionEmitter<'_> {
    pub fn line(&mut self, text: impl AsRef<str>) {
        self.body.push('\t');
        self.body.push_str(text.as_ref());
        self.body.push('\n');
    }

    /// An error naming `inst` as the IR prints it.
    pub fn unsupported(&self, inst: Inst, reason: impl Into<String>) -> PtxError {
        let data = self.func.inst(inst);
        let text = match self.func.dfg.inst_result(inst) {
            Some(result) => format!("{} = {}", self.value_text(result), data.opcode_name()),
            None => data.opcode_name().to_string(),
        };
        PtxError::Unsupported {
            function: self.func.name.clone(),
            inst: text,
            reason: reason.into(),
        }
    }

    fn value_text(&self, value: Value) -> String {
        match self.func.dfg.value_name(value) {
            Some(name) => format!("%{name}"),
            None => format!("%{value}"),
        }
    }

    pub fn value_type(&self, value: Value) -> &Type {
        self.func.dfg.value_type(value)
    }

    /// The register of a value; `inst` is named in the error when its type has none.
    pub fn reg(&mut self, value: Value, inst: Inst) -> Result<String, PtxError> {
        let ty = self.value_type(value).clone();
        let class = RegClass::of(&ty).ok_or_else(|| {
            self.unsupported(inst, format!("values of type {ty} have no PTX register"))
        })?;
        Ok(self.regs.value(value, class))
    }

    pub fn label(&self, block: Block) -> String {
        format!("$L__{}", block)
    }

    fn fresh_label(&mut self) -> String {
        self.next_label += 1;
        format!("$L__edge{}", self.next_label)
    }

    fn load_params(&mut self) -> Result<(), PtxError> {
        for (index, &value) in self.func.params().iter().enumerate() {
            let ty = self.value_type(value).clone();
            let name = param_name(self.func, index);
            let class = RegClass::of(&ty).ok_or_else(|| PtxError::Signature {
                function: self.func.name.clone(),
                reason: format!("parameter {index} of type {ty} has no PTX register"),
            })?;
            let reg = self.regs.value(value, class);
            match ty {
                Type::I1 => {
                    let byte = self.regs.fresh(RegClass::B16);
                    self.line(format!("ld.param.u8 {byte}, [{name}];"));
                    self.line(format!("and.b16 {byte}, {byte}, 1;"));
                    self.line(format!("setp.ne.u16 {reg}, {byte}, 0;"));
                }
                _ => {
                    let pty = param_type(&ty).unwrap_or(".b64");
                    self.line(format!("ld.param{pty} {reg}, [{name}];"));
                }
            }
        }
        Ok(())
    }

    fn emit_block(&mut self, block: Block) -> Result<(), PtxError> {
        self.body.push_str(&format!("{}:\n", self.label(block)));
        for &inst in self.func.layout.block_insts(block) {
            if self.options.annotate {
                self.line(format!("// {}", self.func.inst(inst).opcode_name()));
            }
            let data = self.func.inst(inst).clone();
            if data.is_terminator() {
                self.terminator(inst, &data)?;
            } else {
                self.select(inst, &data)?;
            }
        }
        let stubs = std::mem::take(&mut self.edge_stubs);
        self.body.push_str(&stubs);
        Ok(())
    }

    /// Moves the edge's arguments into the target's parameters. All arguments are read
    /// into temporaries first when there are several, so that a parameter overwritten
    /// early cannot feed a later move (`^loop(%b, %a)` swaps).
    fn edge_moves(&mut self, dest: &BlockCall, inst: Inst) -> Result<Vec<String>, PtxError> {
        let params = self.func.dfg.block_params(dest.block).to_vec();
        if params.len() != dest.args.len() {
            return Err(self.unsupported(inst, "branch argument count differs from the target"));
        }
        let mut sources = Vec::new();
        for &arg in &dest.args {
            sources.push((self.reg(arg, inst)?, RegClass::of(self.value_type(arg))));
        }
        let mut lines = Vec::new();
        if sources.len() > 1 {
            for source in sources.iter_mut() {
                if let (reg, Some(class)) = source {
                    let temp = self.regs.fresh(*class);
                    lines.push(format!("mov{} {temp}, {reg};", mov_type(*class)));
                    *reg = temp;
                }
            }
        }
        for (&param, (source, class)) in params.iter().zip(sources) {
            let target = self.reg(param, inst)?;
            let class = class.unwrap_or(RegClass::B64);
            lines.push(format!("mov{} {target}, {source};", mov_type(class)));
        }
        Ok(lines)
    }

    /// Jumps to `dest`, moving its arguments first.
    fn jump_to(&mut self, dest: &BlockCall, inst: Inst) -> Result<(), PtxError> {
        for line in self.edge_moves(dest, inst)? {
            self.line(line);
        }
        let falls_through = self.next_block == Some(dest.block) && self.edge_stubs.is_empty();
        if !falls_through {
            let label = self.label(dest.block);
            self.line(format!("bra.uni {label};"));
        }
        Ok(())
    }

    /// The label to branch to conditionally: the block itself, or an edge stub holding
    /// the argument moves.
    fn conditional_target(&mut self, dest: &BlockCall, inst: Inst) -> Result<String, PtxError> {
        if dest.args.is_empty() {
            return Ok(self.label(dest.block));
        }
        let stub = self.fresh_label();
        let moves = self.edge_moves(dest, inst)?;
        let mut text = format!("{stub}:\n");
        for line in moves {
            text.push_str(&format!("\t{line}\n"));
        }
        text.push_str(&format!("\tbra.uni {};\n", self.label(dest.block)));
        self.edge_stubs.push_str(&text);
        Ok(stub)
    }

    fn terminator(&mut self, inst: Inst, data: &InstructionData) -> Result<(), PtxError> {
        match data {
            InstructionData::Jump { dest } => self.jump_to(dest, inst),
            InstructionData::Brif { cond, then_dest, else_dest } => {
                let cond = self.reg(*cond, inst)?;
                let target = self.conditional_target(then_dest, inst)?;
                self.line(format!("@{cond} bra {target};"));
                self.jump_to(else_dest, inst)
            }
            InstructionData::Switch { value, default, cases } => {
                let ty = self.value_type(*value).clone();
                let scrutinee = self.reg(*value, inst)?;
                let (cmp_type, normalized) = match ty {
                    Type::I8 => {
                        let t = self.regs.fresh(RegClass::B16);
                        self.line(format!("and.b16 {t}, {scrutinee}, 255;"));
                        ("u16", t)
                    }
                    Type::I16 => ("u16", scrutinee),
                    Type::I32 => ("u32", scrutinee),
                    Type::I64 => ("u64", scrutinee),
                    other => {
                        return Err(self.unsupported(inst, format!("switch on {other}")));
                    }
                };
                for (case, dest) in cases {
                    let pred = self.regs.fresh(RegClass::Pred);
                    self.line(format!("setp.eq.{cmp_type} {pred}, {normalized}, {case};"));
                    let target = self.conditional_target(dest, inst)?;
                    self.line(format!("@{pred} bra {target};"));
                }
                self.jump_to(default, inst)
            }
            InstructionData::Return { value } => {
                if let Some(value) = value {
                    let ty = self.value_type(*value).clone();
                    let reg = self.reg(*value, inst)?;
                    self.store_param("func_retval0", &ty, &reg);
                }
                self.line("ret;");
                Ok(())
            }
            InstructionData::Unreachable => {
                self.line("trap;");
                Ok(())
            }
            _ => Err(self.unsupported(inst, "not a terminator")),
        }
    }

    /// `st.param` of a register into a `.param` of the given IR type.
    pub fn store_param(&mut self, param: &str, ty: &Type, reg: &str) {
        match ty {
            Type::I1 => {
                let byte = self.regs.fresh(RegClass::B16);
                self.line(format!("selp.u16 {byte}, 1, 0, {reg};"));
                self.line(format!("st.param.b8 [{param}], {byte};"));
            }
            _ => {
                let pty = param_type(ty).unwrap_or(".b64");
                self.line(format!("st.param{pty} [{param}], {reg};"));
            }
        }
    }
}

/// The `mov` type suffix of a register class.
pub fn mov_type(class: RegClass) -> &'static str {
    match class {
        RegClass::Pred => ".pred",
        RegClass::B16 => ".b16",
        RegClass::B32 => ".b32",
        RegClass::B64 => ".b64",
        RegClass::F32 => ".f32",
        RegClass::F64 => ".f64",
    }
}
