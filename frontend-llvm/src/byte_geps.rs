//! Constant GEPs rewritten into bytes before llvm-ir reads the module. llvm-ir 0.11 drops a
//! constant GEP's source element type (LLVM >= 15), so `getelementptr (%struct.S, ptr @g,
//! i64 0, i32 1)` and `getelementptr ([2 x i32], ptr @g, i64 0, i32 1)` look alike there
//! although their offsets differ. Here, in the C API's copy of the module, each constant GEP
//! whose indices are integer constants is replaced (by its own identity, `LLVMValueRef`)
//! with `getelementptr (i8, base, iN offset)`, the offset computed by LLVM's data layout.
//! After the rewrite every such GEP in the module llvm-ir reads has exactly one index, a
//! byte count (`Extras::constant_geps_in_bytes`).
//!
//! Replacing a constant rebuilds (and frees) the constants that use it, so each round
//! replaces only the innermost GEPs still in the old form (none of them uses another),
//! then walks the module again; a GEP nested inside another is rewritten a round later.

use std::collections::HashMap;

use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::*;
use llvm_sys::{LLVMOpcode, LLVMTypeKind};

/// Rounds before giving up; nesting of constant GEPs in real code is a few levels deep.
/// Whatever is left afterwards stays as it is and the importer names it.
const MAX_ROUNDS: usize = 64;

/// Rewrites the module's constant GEPs into byte offsets; `true` when anything changed.
///
/// # Safety
/// `module` must be a live module and `target_data` its data layout.
pub(crate) unsafe fn rewrite_constant_geps(
    module: LLVMModuleRef,
    target_data: LLVMTargetDataRef,
) -> bool {
    let context = LLVMGetModuleContext(module);
    let byte = LLVMInt8TypeInContext(context);
    let mut changed = false;
    for _ in 0..MAX_ROUNDS {
        let mut walk = Walk { byte, nested: HashMap::new(), innermost: Vec::new() };
        for root in constant_roots(module) {
            walk.visit(root);
        }
        if walk.innermost.is_empty() {
            break;
        }
        for gep in walk.innermost {
            let Some(offset) = byte_offset(target_data, gep) else { continue };
            let base = LLVMGetOperand(gep, 0);
            let space = LLVMGetPointerAddressSpace(LLVMTypeOf(base));
            let index_type = LLVMIntPtrTypeForASInContext(context, target_data, space);
            let mut index = LLVMConstInt(index_type, offset as u64, 1);
            let replacement = if LLVMIsInBounds(gep) != 0 {
                LLVMConstInBoundsGEP2(byte, base, &mut index, 1)
            } else {
                LLVMConstGEP2(byte, base, &mut index, 1)
            };
            LLVMReplaceAllUsesWith(gep, replacement);
            changed = true;
        }
    }
    changed
}

/// The constants the module uses directly: initializers, aliasees and instruction operands.
unsafe fn constant_roots(module: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut roots = Vec::new();
    let mut global = LLVMGetFirstGlobal(module);
    while !global.is_null() {
        let init = LLVMGetInitializer(global);
        if !init.is_null() {
            roots.push(init);
        }
        global = LLVMGetNextGlobal(global);
    }
    let mut alias = LLVMGetFirstGlobalAlias(module);
    while !alias.is_null() {
        let aliasee = LLVMAliasGetAliasee(alias);
        if !aliasee.is_null() {
            roots.push(aliasee);
        }
        alias = LLVMGetNextGlobalAlias(alias);
    }
    let mut func = LLVMGetFirstFunction(module);
    while !func.is_null() {
        let mut bb = LLVMGetFirstBasicBlock(func);
        while !bb.is_null() {
            let mut inst = LLVMGetFirstInstruction(bb);
            while !inst.is_null() {
                for i in 0..LLVMGetNumOperands(inst).max(0) as u32 {
                    let op = LLVMGetOperand(inst, i);
                    if !op.is_null() && !LLVMIsAConstant(op).is_null() {
                        roots.push(op);
                    }
                }
                inst = LLVMGetNextInstruction(inst);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
        func = LLVMGetNextFunction(func);
    }
    roots
}

struct Walk {
    byte: LLVMTypeRef,
    /// Constant -> whether it is or contains a GEP still to rewrite.
    nested: HashMap<LLVMValueRef, bool>,
    innermost: Vec<LLVMValueRef>,
}

impl Walk {
    /// Whether `value` is or contains a GEP to rewrite; records the innermost ones.
    unsafe fn visit(&mut self, value: LLVMValueRef) -> bool {
        if !LLVMIsAGlobalValue(value).is_null() || LLVMIsAConstant(value).is_null() {
            return false;
        }
        if let Some(&known) = self.nested.get(&value) {
            return known;
        }
        // Cycles only pass through globals, which end the walk above.
        self.nested.insert(value, false);
        let mut below = false;
        for i in 0..LLVMGetNumOperands(value).max(0) as u32 {
            let op = LLVMGetOperand(value, i);
            if !op.is_null() && self.visit(op) {
                below = true;
            }
        }
        let here = self.to_rewrite(value);
        if here && !below {
            self.innermost.push(value);
        }
        self.nested.insert(value, here || below);
        here || below
    }

    /// A scalar constant GEP with integer-constant indices, not yet `gep i8, p, n`.
    unsafe fn to_rewrite(&self, value: LLVMValueRef) -> bool {
        if LLVMIsAConstantExpr(value).is_null()
            || LLVMGetConstOpcode(value) != LLVMOpcode::LLVMGetElementPtr
            || LLVMGetTypeKind(LLVMTypeOf(value)) != LLVMTypeKind::LLVMPointerTypeKind
        {
            return false;
        }
        let operands = LLVMGetNumOperands(value).max(0) as u32;
        let indices_are_ints =
            (1..operands).all(|i| !LLVMIsAConstantInt(LLVMGetOperand(value, i)).is_null());
        let in_bytes = operands == 2 && LLVMGetGEPSourceElementType(value) == self.byte;
        indices_are_ints && !in_bytes
    }
}

/// The byte offset of a constant GEP with integer-constant indices, from the data layout.
unsafe fn byte_offset(target_data: LLVMTargetDataRef, gep: LLVMValueRef) -> Option<i64> {
    let mut ty = LLVMGetGEPSourceElementType(gep);
    let operands = LLVMGetNumOperands(gep).max(0) as u32;
    let mut offset: i64 = 0;
    for i in 1..operands {
        let k = LLVMConstIntGetSExtValue(LLVMGetOperand(gep, i));
        if i == 1 {
            let size = LLVMABISizeOfType(target_data, ty) as i64;
            offset = offset.wrapping_add(k.wrapping_mul(size));
            continue;
        }
        match LLVMGetTypeKind(ty) {
            LLVMTypeKind::LLVMStructTypeKind => {
                offset = offset.wrapping_add(LLVMOffsetOfElement(target_data, ty, k as u32) as i64);
                ty = LLVMStructGetTypeAtIndex(ty, k as u32);
            }
            LLVMTypeKind::LLVMArrayTypeKind | LLVMTypeKind::LLVMVectorTypeKind => {
                ty = LLVMGetElementType(ty);
                let size = LLVMABISizeOfType(target_data, ty) as i64;
                offset = offset.wrapping_add(k.wrapping_mul(size));
            }
            _ => return None,
        }
    }
    Some(offset)
}
