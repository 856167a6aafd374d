//! Why a derivative cannot be synthesized. Every error names the function and, when it
//! comes from one instruction, that instruction and its source line, so the CLI can print
//! `prog.c:12:7: in @loss: cannot deduce the type of ...` and exit 1.

use std::fmt;

use adc_ir::{Function, Inst, Module};

/// Where an error happened: the function, the instruction as printed, its source line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub function: String,
    /// The instruction in adc's text form, e.g. `%v7 = load i64, %v3, align 8`.
    pub inst: Option<String>,
    /// `file:line:col` from the input's debug info, when present.
    pub source: Option<String>,
}

impl Site {
    pub fn function(function: &str) -> Site {
        Site { function: function.to_string(), inst: None, source: None }
    }

    /// Describes `inst` of `func` with its text and, when known, its debug location.
    pub fn inst(module: &Module, func: &Function, inst: Inst) -> Site {
        let text = adc_ir::text::FunctionPrinter::new(module, func).inst_to_string(inst);
        let source = func
            .dfg
            .debug_locs
            .get(inst)
            .and_then(|l| l.as_ref())
            .map(|l| format!("{}:{}:{}", l.file, l.line, l.column));
        Site { function: func.name.to_string(), inst: Some(text), source }
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(source) = &self.source {
            write!(f, "{source}: ")?;
        }
        write!(f, "in @{}", self.function)?;
        if let Some(inst) = &self.inst {
            write!(f, ", at `{inst}`")?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AdErrorKind {
    #[error(
        "cannot deduce the type of {what}; the derivative needs to know whether it holds floats"
    )]
    UndeducibleType { what: String },
    #[error("malformed call to {api}: {reason}")]
    BadApiCall { api: String, reason: String },
    #[error(
        "no derivative is known for the external function @{callee} (it gets an active \
         operand; give adc its body by passing the bitcode that defines it as another input, \
         or list it in `__enzyme_inactivefn` if its effects carry no derivative)"
    )]
    UnknownExternal { callee: String },
    #[error("cannot differentiate {what}")]
    Unsupported { what: String },
    /// An operation the derivative-rule table has no rule for, or rules out
    /// (`crate::rules::RuleError`, whose message says which and why).
    #[error("{message}")]
    NoRule { message: String },
    /// adc's analyses contradict each other; going on would give a wrong derivative.
    #[error("internal error: {what}")]
    Internal { what: String },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{site}: {kind}")]
pub struct AdError {
    pub site: Site,
    pub kind: AdErrorKind,
}

impl AdError {
    pub fn new(site: Site, kind: AdErrorKind) -> AdError {
        AdError { site, kind }
    }
}
