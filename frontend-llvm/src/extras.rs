//! Facts that `llvm-ir` 0.11 does not expose, read with the LLVM C API in a second walk over
//! the same bitcode: fast-math flags and `disjoint` per instruction, TBAA access types,
//! byte offsets of constant GEPs (whose source element type llvm-ir drops), value types of
//! global declarations, nvvm kernel annotations and the templates of inline assembly. Also the place where a file is checked
//! and parsed first, so that a bad file gives LLVM's own one-line reason, and where constant
//! GEPs are rewritten into byte offsets (`crate::byte_geps`) before llvm-ir reads the module.
//!
//! Instructions are matched to llvm-ir's by (function, block index, instruction index),
//! the order both walks use; a function whose shape differs is simply left without extras.

use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_void, CStr};
use std::path::Path;
use std::sync::Arc;

use adc_ir::Type;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::*;
use llvm_sys::{LLVMOpcode, LLVMTypeKind};

use crate::error::ImportError;

/// What the C API tells about one instruction.
#[derive(Clone, Default, Debug)]
pub struct InstExtra {
    /// LLVM's `LLVMFastMath*` bits.
    pub fast_math: u32,
    pub disjoint: bool,
    /// Name of the TBAA access type (`"double"`, `"any pointer"`).
    pub tbaa: Option<Arc<str>>,
    /// The template of a call to inline assembly (llvm-ir keeps only its type).
    pub asm: Option<Arc<str>>,
    /// A loop latch branch whose `!llvm.loop` says `llvm.loop.isvectorized`: LLVM's loop
    /// vectorizer made this loop (a vector loop, or the scalar loop it falls back to).
    pub loop_vectorized: bool,
}

/// Side information for one module; `Extras::default()` is "nothing known".
#[derive(Clone, Default, Debug)]
pub struct Extras {
    /// Function name -> blocks -> instructions (terminator included), in LLVM order.
    pub insts: HashMap<String, Vec<Vec<InstExtra>>>,
    /// Every constant GEP with integer-constant indices was rewritten to
    /// `getelementptr (i8, base, offset)` (`crate::byte_geps`): a one-index GEP counts bytes.
    pub constant_geps_in_bytes: bool,
    /// Value types of global variables (llvm-ir only knows their pointer type).
    pub global_types: HashMap<String, Type>,
    /// Functions named `kernel` in `!nvvm.annotations`.
    pub kernels: HashSet<String>,
    /// Integer constants wider than 64 bits: (width, low 64 bits) -> full value. llvm-ir
    /// reads such constants through `LLVMConstIntGetZExtValue` and silently keeps only
    /// the low word; `None` marks two constants that share a key.
    pub wide_ints: HashMap<(u32, u64), Option<u128>>,
}

impl Extras {
    pub fn inst(&self, function: &str, block: usize, inst: usize) -> Option<&InstExtra> {
        self.insts.get(function)?.get(block)?.get(inst)
    }
}

/// Reads and checks the file, parses it with LLVM, rewrites its constant GEPs into bytes
/// and collects the extras. When the rewrite changed the module, it is written to
/// `rewritten` for llvm-ir to read instead of `path`; the returned flag says so.
pub fn read_extras(path: &Path, rewritten: &Path) -> Result<(Extras, bool), ImportError> {
    with_parsed_module(path, |context, module| {
        // SAFETY: both come from `with_parsed_module` and live until it returns.
        unsafe {
            let layout = LLVMGetDataLayoutStr(module);
            let target_data = LLVMCreateTargetData(layout);
            let changed = crate::byte_geps::rewrite_constant_geps(module, target_data);
            LLVMDisposeTargetData(target_data);
            let mut extras = collect(context, module);
            extras.constant_geps_in_bytes = true;
            if !changed {
                return Ok((extras, false));
            }
            let written = std::ffi::CString::new(rewritten.as_os_str().as_encoded_bytes())
                .map(|c| llvm_sys::bit_writer::LLVMWriteBitcodeToFile(module, c.as_ptr()) == 0)
                .unwrap_or(false);
            match written {
                true => Ok((extras, true)),
                false => Err(ImportError::Unreadable {
                    path: path.to_path_buf(),
                    reason: format!(
                        "cannot write the module with byte-offset GEPs to {}",
                        rewritten.display()
                    ),
                }),
            }
        }
    })?
}

/// Reads and checks a bitcode file, parses it in a fresh LLVM context and runs `use_module`
/// on it; LLVM's own one-line reason when the file is not good bitcode.
pub(crate) fn with_parsed_module<T>(
    path: &Path,
    use_module: impl FnOnce(LLVMContextRef, LLVMModuleRef) -> T,
) -> Result<T, ImportError> {
    with_context(|context, message| {
        // SAFETY: the module is parsed into the live `context` and disposed of before it;
        // `use_module` only borrows both.
        unsafe {
            let module = parse_in_context(context, path, message)?;
            let result = use_module(context, module);
            LLVMDisposeModule(module);
            Ok(result)
        }
    })
}

/// Runs `work` with a fresh LLVM context whose diagnostics (LLVM's one-line reasons) are
/// collected into the `message` it is given; the context is disposed of afterwards, so
/// `work` must dispose of the modules it makes in it.
pub(crate) fn with_context<T>(work: impl FnOnce(LLVMContextRef, &mut Option<String>) -> T) -> T {
    // SAFETY: the diagnostic handler only writes into `message`, which outlives the
    // context; the context is disposed of after `work` is done with it.
    unsafe {
        let context = LLVMContextCreate();
        let mut message: Option<String> = None;
        LLVMContextSetDiagnosticHandler(
            context,
            Some(diagnostic_handler),
            &mut message as *mut Option<String> as *mut c_void,
        );
        let result = work(context, &mut message);
        LLVMContextDispose(context);
        result
    }
}

/// Parses the bitcode file at `path` into `context` (whose diagnostic handler writes into
/// `message`); the caller owns the returned module.
///
/// # Safety
/// `context` must be a live LLVM context whose diagnostic handler is
/// [`diagnostic_handler`] with `message` as its data.
pub(crate) unsafe fn parse_in_context(
    context: LLVMContextRef,
    path: &Path,
    message: &mut Option<String>,
) -> Result<LLVMModuleRef, ImportError> {
    let bytes = std::fs::read(path)
        .map_err(|e| ImportError::Unreadable { path: path.to_path_buf(), reason: e.to_string() })?;
    let raw_magic = bytes.starts_with(b"BC\xC0\xDE");
    let wrapper_magic = bytes.starts_with(&[0xDE, 0xC0, 0x17, 0x0B]);
    if !raw_magic && !wrapper_magic {
        return Err(ImportError::NotBitcode { path: path.to_path_buf() });
    }
    let buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(
        bytes.as_ptr() as *const c_char,
        bytes.len(),
        c"input".as_ptr(),
    );
    let mut module: LLVMModuleRef = std::ptr::null_mut();
    let failed = llvm_sys::bit_reader::LLVMParseBitcodeInContext2(context, buffer, &mut module);
    LLVMDisposeMemoryBuffer(buffer);
    if failed != 0 || module.is_null() {
        let reason = message.take().unwrap_or_else(|| "invalid bitcode".to_string());
        let reason = reason.lines().next().unwrap_or("invalid bitcode").to_string();
        return Err(ImportError::BadBitcode { path: path.to_path_buf(), reason });
    }
    Ok(module)
}

extern "C" fn diagnostic_handler(info: LLVMDiagnosticInfoRef, data: *mut c_void) {
    // SAFETY: `data` is the `Option<String>` registered with the context.
    unsafe {
        let text = LLVMGetDiagInfoDescription(info);
        if !text.is_null() {
            let target = &mut *(data as *mut Option<String>);
            if target.is_none() {
                *target = Some(CStr::from_ptr(text).to_string_lossy().into_owned());
            }
            LLVMDisposeMessage(text);
        }
    }
}

unsafe fn value_name(value: LLVMValueRef) -> String {
    let mut len = 0usize;
    let ptr = LLVMGetValueName2(value, &mut len);
    if ptr.is_null() || len == 0 {
        return String::new();
    }
    let bytes = std::slice::from_raw_parts(ptr as *const u8, len);
    String::from_utf8_lossy(bytes).into_owned()
}

unsafe fn md_string(value: LLVMValueRef) -> Option<String> {
    if value.is_null() || LLVMIsAMDString(value).is_null() {
        return None;
    }
    let mut len = 0u32;
    let ptr = LLVMGetMDString(value, &mut len);
    if ptr.is_null() {
        return None;
    }
    let bytes = std::slice::from_raw_parts(ptr as *const u8, len as usize);
    Some(String::from_utf8_lossy(bytes).into_owned())
}

unsafe fn md_operands(node: LLVMValueRef) -> Vec<LLVMValueRef> {
    if node.is_null() || LLVMIsAMDNode(node).is_null() {
        return Vec::new();
    }
    let n = LLVMGetMDNodeNumOperands(node) as usize;
    let mut ops = vec![std::ptr::null_mut(); n];
    LLVMGetMDNodeOperands(node, ops.as_mut_ptr());
    ops
}

struct Collector {
    tbaa_kind: u32,
    loop_kind: u32,
    visited: HashSet<LLVMValueRef>,
    extras: Extras,
}

unsafe fn collect(context: LLVMContextRef, module: LLVMModuleRef) -> Extras {
    let tbaa_kind = LLVMGetMDKindIDInContext(context, c"tbaa".as_ptr(), 4);
    let loop_kind = LLVMGetMDKindIDInContext(context, c"llvm.loop".as_ptr(), 9);
    let mut c =
        Collector { tbaa_kind, loop_kind, visited: HashSet::new(), extras: Extras::default() };

    let mut global = LLVMGetFirstGlobal(module);
    while !global.is_null() {
        let name = value_name(global);
        if let Some(ty) = sys_type(LLVMGlobalGetValueType(global)) {
            c.extras.global_types.insert(name, ty);
        }
        let init = LLVMGetInitializer(global);
        if !init.is_null() {
            c.visit_constant(init);
        }
        global = LLVMGetNextGlobal(global);
    }
    let mut alias = LLVMGetFirstGlobalAlias(module);
    while !alias.is_null() {
        let aliasee = LLVMAliasGetAliasee(alias);
        if !aliasee.is_null() {
            c.visit_constant(aliasee);
        }
        alias = LLVMGetNextGlobalAlias(alias);
    }

    let mut func = LLVMGetFirstFunction(module);
    while !func.is_null() {
        let name = value_name(func);
        let mut blocks = Vec::new();
        let mut bb = LLVMGetFirstBasicBlock(func);
        while !bb.is_null() {
            let mut insts = Vec::new();
            let mut inst = LLVMGetFirstInstruction(bb);
            while !inst.is_null() {
                insts.push(c.instruction(inst));
                inst = LLVMGetNextInstruction(inst);
            }
            blocks.push(insts);
            bb = LLVMGetNextBasicBlock(bb);
        }
        if !blocks.is_empty() {
            c.extras.insts.insert(name, blocks);
        }
        func = LLVMGetNextFunction(func);
    }

    let annotations = c"nvvm.annotations";
    let count = LLVMGetNamedMetadataNumOperands(module, annotations.as_ptr());
    if count > 0 {
        let mut nodes = vec![std::ptr::null_mut(); count as usize];
        LLVMGetNamedMetadataOperands(module, annotations.as_ptr(), nodes.as_mut_ptr());
        for node in nodes {
            let ops = md_operands(node);
            let is_kernel =
                (1..ops.len()).step_by(2).any(|k| md_string(ops[k]).as_deref() == Some("kernel"));
            if let Some(&f) = ops.first() {
                if is_kernel && !f.is_null() && !LLVMIsAFunction(f).is_null() {
                    c.extras.kernels.insert(value_name(f));
                }
            }
        }
    }
    c.extras
}

impl Collector {
    unsafe fn instruction(&mut self, inst: LLVMValueRef) -> InstExtra {
        let mut extra = InstExtra::default();
        if LLVMCanValueUseFastMathFlags(inst) != 0 {
            extra.fast_math = LLVMGetFastMathFlags(inst);
        }
        if LLVMGetInstructionOpcode(inst) == LLVMOpcode::LLVMOr {
            extra.disjoint = LLVMGetIsDisjoint(inst) != 0;
        }
        let tag = LLVMGetMetadata(inst, self.tbaa_kind);
        if !tag.is_null() {
            let ops = md_operands(tag);
            // Struct-path tags are `!{base, access, offset}`; old scalar tags are the
            // type node itself `!{!"name", parent}`.
            let name = match ops.get(1).map(|op| md_operands(*op)) {
                Some(access) if !access.is_empty() => md_string(access[0]),
                _ => ops.first().and_then(|op| md_string(*op)),
            };
            extra.tbaa = name.map(Arc::from);
        }
        if LLVMGetInstructionOpcode(inst) == LLVMOpcode::LLVMBr {
            let node = LLVMGetMetadata(inst, self.loop_kind);
            // `!{self, !{!"llvm.loop.isvectorized", i32 1}, ...}`.
            extra.loop_vectorized = md_operands(node).into_iter().skip(1).any(|property| {
                md_operands(property).first().and_then(|name| md_string(*name)).as_deref()
                    == Some("llvm.loop.isvectorized")
            });
        }
        if LLVMGetInstructionOpcode(inst) == LLVMOpcode::LLVMCall {
            let callee = LLVMGetCalledValue(inst);
            if !callee.is_null() && !LLVMIsAInlineAsm(callee).is_null() {
                let mut len = 0usize;
                let text = LLVMGetInlineAsmAsmString(callee, &mut len);
                if !text.is_null() {
                    let bytes = std::slice::from_raw_parts(text as *const u8, len);
                    extra.asm = Some(Arc::from(String::from_utf8_lossy(bytes).as_ref()));
                }
            }
        }
        let n = LLVMGetNumOperands(inst).max(0) as u32;
        for i in 0..n {
            let op = LLVMGetOperand(inst, i);
            if !op.is_null() && !LLVMIsAConstant(op).is_null() {
                self.visit_constant(op);
            }
        }
        extra
    }

    /// Records every wide integer constant reachable from `value` (without entering globals).
    unsafe fn visit_constant(&mut self, value: LLVMValueRef) {
        if !LLVMIsAGlobalValue(value).is_null() || !self.visited.insert(value) {
            return;
        }
        if !LLVMIsAConstantInt(value).is_null() {
            let bits = LLVMGetIntTypeWidth(LLVMTypeOf(value));
            if bits > 64 {
                let full = wide_int_value(value, bits);
                let key = (bits, LLVMConstIntGetZExtValue(value));
                let entry = self.extras.wide_ints.entry(key).or_insert(full);
                if *entry != full {
                    *entry = None;
                }
            }
            return;
        }
        let n = LLVMGetNumOperands(value).max(0) as u32;
        for i in 0..n {
            let op = LLVMGetOperand(value, i);
            if !op.is_null() && !LLVMIsAConstant(op).is_null() {
                self.visit_constant(op);
            }
        }
    }
}

/// The full value of a wide integer constant, read from LLVM's text (`i128 -5`): the C API
/// has no accessor for more than 64 bits.
unsafe fn wide_int_value(value: LLVMValueRef, bits: u32) -> Option<u128> {
    let text = LLVMPrintValueToString(value);
    if text.is_null() {
        return None;
    }
    let printed = CStr::from_ptr(text).to_string_lossy().into_owned();
    LLVMDisposeMessage(text);
    let number = printed.split_whitespace().last()?;
    let parsed = match number {
        "true" => 1,
        "false" => 0,
        n => n.parse::<i128>().ok()? as u128,
    };
    Some(adc_ir::constant::mask_to_width(parsed, bits))
}

/// Converts a C-API type for the value types of globals.
unsafe fn sys_type(ty: LLVMTypeRef) -> Option<Type> {
    use LLVMTypeKind::*;
    Some(match LLVMGetTypeKind(ty) {
        LLVMIntegerTypeKind => Type::int(LLVMGetIntTypeWidth(ty))?,
        LLVMFloatTypeKind => Type::F32,
        LLVMDoubleTypeKind => Type::F64,
        LLVMPointerTypeKind => Type::Ptr(LLVMGetPointerAddressSpace(ty)),
        LLVMArrayTypeKind => {
            Type::array(sys_type(LLVMGetElementType(ty))?, LLVMGetArrayLength2(ty))
        }
        LLVMVectorTypeKind => {
            Type::vector(sys_type(LLVMGetElementType(ty))?, LLVMGetVectorSize(ty))
        }
        LLVMStructTypeKind => {
            let n = LLVMCountStructElementTypes(ty);
            let mut fields = Vec::with_capacity(n as usize);
            for i in 0..n {
                fields.push(sys_type(LLVMStructGetTypeAtIndex(ty, i))?);
            }
            Type::structure(fields, LLVMIsPackedStruct(ty) != 0)
        }
        _ => return None,
    })
}
