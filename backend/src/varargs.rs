//! Variadic function definitions on x86-64 System V, which Cranelift 0.135 cannot express.
//!
//! A defined variadic function `f` becomes two functions:
//! - `f` itself (the input's symbol and linkage) is a fixed machine-code *entry thunk*,
//!   defined with `define_function_bytes`:
//!   ```text
//!   push rbp; mov rbp, rsp; sub rsp, 176      ; rsp is 16-aligned again
//!   mov [rsp + 8k], <rdi rsi rdx rcx r8 r9>    ; the register save area, 0..48
//!   movaps [rsp + 48 + 16k], xmm0..xmm7        ; 48..176 (always: %al is not trusted)
//!   mov rdi, rsp                               ; save area
//!   lea rsi, [rbp + 16]                        ; caller's argument area (entry rsp + 8)
//!   call __adc_va_body.f                       ; rel32 in objects, movabs+call r11 in the JIT
//!   mov rax, [rbp - 176]                       ; only with an sret parameter: rax = rdi
//!   leave; ret
//!   ```
//!   The body is called with a 16-byte-aligned stack; rax/rdx/xmm0/xmm1 return through.
//! - `__adc_va_body.f` (local) is the Cranelift-compiled body, of signature
//!   `(save_area: i64, arg_area: i64) -> f's returns`. A first block loads each named
//!   parameter from where its caller put it (`adc_ir::varargs::named_params`: a register
//!   slot of the save area, a stack slot of the argument area, or the address of a `byval`
//!   copy there) and jumps to the function's entry block.
//!
//! `call @llvm.va_start(%ap)` stores `gp_offset`, `fp_offset`, `overflow_arg_area` (the
//! argument area after the named stack parameters) and `reg_save_area` into the 24-byte
//! `va_list`; `va_copy` copies it; `va_end` does nothing. clang's `va_arg` code reads the
//! structure with ordinary loads. The save area lives in the thunk's frame, which outlives
//! the body's; a `va_list` must not outlive the call (C forbids it as well).

use adc_ir::varargs::{self as va, ParamHome, Slot, VaIntrinsic};
use adc_ir::{Function, Module, ParamAttrs, Value};
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::{self, types, AbiParam, InstBuilder};
use cranelift_module::{Linkage as ClLinkage, Module as ClModule, ModuleReloc, ModuleRelocTarget};

use crate::abi;
use crate::lower::{mem, Lower, ModuleIds, R};

/// The save area and argument area of one activation of a variadic function, and the
/// `va_list` fields `va_start` writes.
#[derive(Copy, Clone, Debug)]
pub(crate) struct VaFrame {
    save: ir::Value,
    arg_area: ir::Value,
    gp_offset: u32,
    fp_offset: u32,
    overflow_offset: u64,
}

/// The body's signature: the two areas in, `normal`'s returns out.
pub(crate) fn body_signature(normal: &ir::Signature) -> ir::Signature {
    let mut sig = ir::Signature::new(normal.call_conv);
    sig.params = vec![AbiParam::new(types::I64), AbiParam::new(types::I64)];
    sig.returns = normal.returns.clone();
    sig
}

/// Whether the function returns an aggregate through an `sret` pointer, which must be
/// its first parameter (as System V and clang have it).
fn returns_through_sret(func: &Function) -> R<bool> {
    let sret = |a: &ParamAttrs| a.contains(ParamAttrs::SRET);
    match func.param_attrs.iter().position(sret) {
        None => Ok(false),
        Some(0) => Ok(true),
        Some(i) => {
            Err(format!("parameter {i} of variadic @{} is sret but not the first", func.name))
        }
    }
}

/// The entry thunk's bytes and the relocation of its call to the body.
fn entry_thunk(sret: bool, pic: bool, body: ModuleRelocTarget) -> (Vec<u8>, ModuleReloc) {
    let mut bytes = vec![
        0x55, // push rbp
        0x48, 0x89, 0xe5, // mov rbp, rsp
        0x48, 0x81, 0xec, 0xb0, 0x00, 0x00, 0x00, // sub rsp, 176
        0x48, 0x89, 0x3c, 0x24, // mov [rsp], rdi
        0x48, 0x89, 0x74, 0x24, 0x08, // mov [rsp+8], rsi
        0x48, 0x89, 0x54, 0x24, 0x10, // mov [rsp+16], rdx
        0x48, 0x89, 0x4c, 0x24, 0x18, // mov [rsp+24], rcx
        0x4c, 0x89, 0x44, 0x24, 0x20, // mov [rsp+32], r8
        0x4c, 0x89, 0x4c, 0x24, 0x28, // mov [rsp+40], r9
        0x0f, 0x29, 0x44, 0x24, 0x30, // movaps [rsp+48], xmm0
        0x0f, 0x29, 0x4c, 0x24, 0x40, // movaps [rsp+64], xmm1
        0x0f, 0x29, 0x54, 0x24, 0x50, // movaps [rsp+80], xmm2
        0x0f, 0x29, 0x5c, 0x24, 0x60, // movaps [rsp+96], xmm3
        0x0f, 0x29, 0x64, 0x24, 0x70, // movaps [rsp+112], xmm4
        0x0f, 0x29, 0xac, 0x24, 0x80, 0x00, 0x00, 0x00, // movaps [rsp+128], xmm5
        0x0f, 0x29, 0xb4, 0x24, 0x90, 0x00, 0x00, 0x00, // movaps [rsp+144], xmm6
        0x0f, 0x29, 0xbc, 0x24, 0xa0, 0x00, 0x00, 0x00, // movaps [rsp+160], xmm7
        0x48, 0x89, 0xe7, // mov rdi, rsp
        0x48, 0x8d, 0x75, 0x10, // lea rsi, [rbp+16]
    ];
    let reloc = if pic {
        bytes.extend_from_slice(&[0xe8, 0, 0, 0, 0]); // call rel32 (through the PLT)
        let offset = bytes.len() as u32 - 4;
        ModuleReloc { offset, kind: Reloc::X86CallPLTRel4, name: body, addend: -4 }
    } else {
        // The JIT places functions anywhere: movabs r11, imm64; call r11.
        bytes.extend_from_slice(&[0x49, 0xbb]);
        let offset = bytes.len() as u32;
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&[0x41, 0xff, 0xd3]);
        ModuleReloc { offset, kind: Reloc::Abs8, name: body, addend: 0 }
    };
    if sret {
        bytes.extend_from_slice(&[0x48, 0x8b, 0x85, 0x50, 0xff, 0xff, 0xff]); // mov rax, [rbp-176]
    }
    bytes.extend_from_slice(&[0xc9, 0xc3]); // leave; ret
    (bytes, reloc)
}

/// Declares the body of every defined variadic function and defines its entry thunk
/// under the function's own symbol (already declared in `ids.funcs`).
pub(crate) fn define_entry_thunks<M: ClModule>(
    module: &Module,
    cm: &mut M,
    ids: &mut ModuleIds,
    pic: bool,
) -> crate::Result<()> {
    for (id, func) in module.functions.iter() {
        if func.is_declaration() || !func.signature.varargs {
            continue;
        }
        let err = |e: String| {
            adc_ir::Diagnostic::new(format!("cannot define variadic @{}: {e}", func.name))
        };
        let arch = cm.isa().triple().architecture;
        if arch != target_lexicon::Architecture::X86_64 {
            return Err(err(format!(
                "variadic definitions are implemented for x86-64 only, not {arch}"
            )));
        }
        va::named_params(func).map_err(err)?;
        let sret = returns_through_sret(func).map_err(err)?;
        let normal = abi::signature(
            &func.signature,
            &func.param_attrs,
            &func.byval_sizes,
            &[],
            ids.call_conv,
            false,
        )
        .map_err(err)?;
        let body = cm
            .declare_function(
                &format!("__adc_va_body.{}", func.name),
                ClLinkage::Local,
                &body_signature(&normal),
            )
            .map_err(|e| err(e.to_string()))?;
        let target = ModuleRelocTarget::user(0, body.as_u32());
        let (bytes, reloc) = entry_thunk(sret, pic, target);
        cm.define_function_bytes(ids.funcs[&id], 16, &bytes, &[reloc])
            .map_err(|e| err(e.to_string()))?;
        ids.va_bodies.insert(id, body);
    }
    Ok(())
}

impl<M: ClModule> Lower<'_, '_, M> {
    /// Fills the body's first block (current, with the two area parameters): loads every
    /// named parameter and returns their leaves (lane form) for the entry block.
    pub(crate) fn va_prologue(&mut self, block: ir::Block) -> R<Vec<ir::Value>> {
        let func = self.func;
        let (homes, assigner) = va::named_params(func)?;
        let params = self.b.block_params(block).to_vec();
        let (save, arg_area) = (params[0], params[1]);
        let (gp_offset, fp_offset, overflow_offset) = assigner.va_start_fields();
        self.va_frame = Some(VaFrame { save, arg_area, gp_offset, fp_offset, overflow_offset });
        let mut leaves = Vec::new();
        for home in homes {
            match home {
                ParamHome::Byval(offset) => {
                    leaves.push(self.b.ins().iadd_imm_s(arg_area, offset as i64));
                }
                ParamHome::Leaves(parts) => {
                    for (_, ty, slot) in parts {
                        let (base, offset) = match slot {
                            Slot::Stack(offset) => (arg_area, offset),
                            register => (save, register.save_area_offset().unwrap_or(0)),
                        };
                        let cl = self.cl(&ty)?;
                        leaves.push(self.b.ins().load(cl, mem(), base, offset as i32));
                    }
                }
            }
        }
        Ok(leaves)
    }

    /// `va_start`, `va_end` or `va_copy` on `va_list` pointers `args`.
    pub(crate) fn va_intrinsic(&mut self, intrinsic: VaIntrinsic, args: &[Value]) -> R<()> {
        let ptrs = args.iter().map(|a| self.one(*a)).collect::<R<Vec<_>>>()?;
        let [ap, ..] = ptrs[..] else {
            return Err(format!("@{} without operands", intrinsic.name()));
        };
        match intrinsic {
            VaIntrinsic::Start => {
                let frame = self
                    .va_frame
                    .ok_or_else(|| format!("@{} outside a variadic function", intrinsic.name()))?;
                let gp = self.b.ins().iconst(types::I32, i64::from(frame.gp_offset));
                let fp = self.b.ins().iconst(types::I32, i64::from(frame.fp_offset));
                let overflow =
                    self.b.ins().iadd_imm_s(frame.arg_area, frame.overflow_offset as i64);
                self.b.ins().store(mem(), gp, ap, va::GP_OFFSET_FIELD as i32);
                self.b.ins().store(mem(), fp, ap, va::FP_OFFSET_FIELD as i32);
                self.b.ins().store(mem(), overflow, ap, va::OVERFLOW_AREA_FIELD as i32);
                self.b.ins().store(mem(), frame.save, ap, va::REG_SAVE_AREA_FIELD as i32);
            }
            VaIntrinsic::End => {}
            VaIntrinsic::Copy => {
                let src = *ptrs.get(1).ok_or("@llvm.va_copy without a source")?;
                for offset in (0..va::VA_LIST_BYTES as i32).step_by(8) {
                    let word = self.b.ins().load(types::I64, mem(), src, offset);
                    self.b.ins().store(mem(), word, ap, offset);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> ModuleRelocTarget {
        ModuleRelocTarget::user(0, 7)
    }

    #[test]
    fn the_call_to_the_body_is_relocated() {
        let (bytes, reloc) = entry_thunk(false, true, target());
        assert_eq!(bytes[reloc.offset as usize - 1], 0xe8, "call rel32");
        assert_eq!(&bytes[bytes.len() - 2..], &[0xc9, 0xc3], "leave; ret");
        let (bytes, reloc) = entry_thunk(false, false, target());
        assert_eq!(&bytes[reloc.offset as usize - 2..reloc.offset as usize], &[0x49, 0xbb]);
        assert_eq!(reloc.kind, Reloc::Abs8);
    }

    #[test]
    fn sret_reloads_rax_from_the_saved_rdi() {
        let (plain, _) = entry_thunk(false, true, target());
        let (sret, _) = entry_thunk(true, true, target());
        assert_eq!(sret.len(), plain.len() + 7);
        assert_eq!(
            &sret[sret.len() - 9..sret.len() - 2],
            &[0x48, 0x8b, 0x85, 0x50, 0xff, 0xff, 0xff]
        );
    }
}
