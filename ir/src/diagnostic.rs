//! Diagnostics shared by the parser, the verifier and the interpreter, rendered at the
//! edge (CLI, test runner) with ariadne: file, line, column and a labelled span.

use std::fmt;

use crate::dfg::TextSpan;

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    /// One line saying what is wrong, e.g. "use of undefined value %x".
    pub message: String,
    /// Where in the source text, when the IR came from text.
    pub span: Option<TextSpan>,
    /// Short text attached to the span, e.g. "expected i32, found f64".
    pub label: Option<String>,
    /// Context that has no span: "in function @f, block ^loop", hints.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>) -> Diagnostic {
        Diagnostic { message: message.into(), span: None, label: None, notes: Vec::new() }
    }

    pub fn with_span(mut self, span: TextSpan) -> Diagnostic {
        if !span.is_empty() || span.start > 0 {
            self.span = Some(span);
        }
        self
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Line and column (both 1-based) of the span's start in `source`.
    pub fn line_column(&self, source: &str) -> Option<(usize, usize)> {
        let start = (self.span?.start as usize).min(source.len());
        let before = source.get(..start)?;
        let line = before.matches('\n').count() + 1;
        let column = before.rfind('\n').map_or(start, |nl| start - nl - 1) + 1;
        Some((line, column))
    }

    /// Renders the diagnostic against the text it came from, without colours:
    /// `error: message` then a `file:line:column` header and the labelled source line.
    pub fn render(&self, file_name: &str, source: &str) -> String {
        use ariadne::{Config, IndexType, Label, Report, ReportKind, Source};
        let Some(span) = self.span else {
            return self.to_string();
        };
        let range = clamp(span.range(), source.len());
        let config = Config::default().with_color(false).with_index_type(IndexType::Byte);
        let mut label = Label::new((file_name, range.clone()));
        if let Some(text) = &self.label {
            label = label.with_message(text);
        }
        let mut report = Report::build(ReportKind::Error, (file_name, range))
            .with_config(config)
            .with_message(&self.message)
            .with_label(label);
        for note in &self.notes {
            report = report.with_note(note);
        }
        let mut out = Vec::new();
        let written = report.finish().write((file_name, Source::from(source)), &mut out);
        match written {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            Err(_) => self.to_string(),
        }
    }
}

/// Keeps a span inside the source so that rendering never fails on stale spans.
fn clamp(range: std::ops::Range<usize>, len: usize) -> std::ops::Range<usize> {
    let start = range.start.min(len);
    start..range.end.clamp(start, len)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)?;
        if let Some(label) = &self.label {
            write!(f, " ({label})")?;
        }
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// Several diagnostics from one run (a parse or verification reports all it finds).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn render(&self, file_name: &str, source: &str) -> String {
        self.0.iter().map(|d| d.render(file_name, source)).collect::<Vec<_>>().join("\n")
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_and_column() {
        let source = "func @f() {\n^bb0:\n  bogus\n}\n";
        let start = source.find("bogus").unwrap();
        let d = Diagnostic::new("unknown opcode `bogus`")
            .with_span(TextSpan::new(start, start + 5))
            .with_label("not an instruction");
        assert_eq!(d.line_column(source), Some((3, 3)));
        let text = d.render("t.adir", source);
        assert!(text.contains("t.adir:3:3"), "{text}");
        assert!(text.contains("unknown opcode `bogus`"), "{text}");
        assert!(text.contains("not an instruction"), "{text}");
    }
}
