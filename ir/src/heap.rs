//! The C and C++ heap functions adc knows by name, in one table: the interpreter runs
//! them, the effect analysis describes them, and differentiation gives their blocks
//! shadows. C++'s `operator new` and `operator delete` (Itanium mangling, `size_t` as
//! `unsigned long`) are allocators like `malloc` and `free`: a `std::vector<double>`
//! built with clang++ allocates through `_Znwm` and releases through the sized `_ZdlPvm`.

/// What a known heap function does, with the positions of the operands that matter.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HeapFunction {
    /// Returns a fresh block (or stores it through an operand, `posix_memalign`).
    Allocate(Allocation),
    /// `realloc(block, bytes)`: a block of the new size holding the old one's bytes.
    Reallocate,
    /// Releases the block in operand 0 (`free` and every `operator delete`); further
    /// operands (a size, an alignment, `std::nothrow`) only describe it.
    Release,
}

/// The operands of an allocator.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The operand holding the size in bytes (of one element, for `calloc`).
    pub bytes: usize,
    /// `calloc`'s element count: the block is `count * bytes` bytes, zero-filled.
    pub count: Option<usize>,
    /// The operand holding the alignment (`aligned_alloc`, aligned `operator new`).
    pub align: Option<usize>,
    /// The block is stored through the pointer in this operand and the result is an error
    /// code (`posix_memalign`).
    pub out: Option<usize>,
}

impl Allocation {
    const fn bytes_at(bytes: usize) -> Allocation {
        Allocation { bytes, count: None, align: None, out: None }
    }

    /// Whether the block starts zero-filled.
    pub fn zeroed(&self) -> bool {
        self.count.is_some()
    }

    /// Whether the call returns the block (every allocator but `posix_memalign`).
    pub fn returns_block(&self) -> bool {
        self.out.is_none()
    }
}

impl HeapFunction {
    /// The heap function called `name`, if adc knows it.
    pub fn of(name: &str) -> Option<HeapFunction> {
        const PLAIN: Allocation = Allocation::bytes_at(0);
        Some(match name {
            "malloc" => HeapFunction::Allocate(PLAIN),
            "calloc" => HeapFunction::Allocate(Allocation { bytes: 1, count: Some(0), ..PLAIN }),
            "aligned_alloc" => {
                HeapFunction::Allocate(Allocation { bytes: 1, align: Some(0), ..PLAIN })
            }
            "posix_memalign" => HeapFunction::Allocate(Allocation {
                bytes: 2,
                align: Some(1),
                out: Some(0),
                count: None,
            }),
            "realloc" => HeapFunction::Reallocate,
            "free" => HeapFunction::Release,
            _ => return cxx_heap_function(name),
        })
    }

    /// How many operands a call must have for the positions above to exist (a module may
    /// declare `malloc` with any signature).
    pub fn min_operands(&self) -> usize {
        match self {
            HeapFunction::Allocate(a) => {
                [Some(a.bytes), a.count, a.align, a.out].into_iter().flatten().max().unwrap_or(0)
                    + 1
            }
            HeapFunction::Reallocate => 2,
            HeapFunction::Release => 1,
        }
    }

    /// Whether the call returns a block (every allocator but `posix_memalign`, which
    /// stores it, and `realloc`).
    pub fn returns_block(&self) -> bool {
        match self {
            HeapFunction::Allocate(a) => a.returns_block(),
            HeapFunction::Reallocate => true,
            HeapFunction::Release => false,
        }
    }

    /// Whether `name` is an allocator that returns a fresh block (not `realloc`, whose
    /// block holds an old one's bytes, nor `posix_memalign`).
    pub fn returns_new_block(name: &str) -> bool {
        matches!(HeapFunction::of(name), Some(HeapFunction::Allocate(a)) if a.returns_block())
    }

    /// Whether `name` releases the block in its first operand.
    pub fn is_release(name: &str) -> bool {
        HeapFunction::of(name) == Some(HeapFunction::Release)
    }
}

/// `operator new` / `new[]` (plain, `std::nothrow`, aligned) and `operator delete` /
/// `delete[]` (plain, sized, aligned, `std::nothrow`).
fn cxx_heap_function(name: &str) -> Option<HeapFunction> {
    let rest = name.strip_prefix("_Zn").and_then(|r| r.strip_prefix(['w', 'a']));
    if let Some(rest) = rest.and_then(|r| r.strip_prefix('m')) {
        let nothrow = |r: &str| r.is_empty() || r == "RKSt9nothrow_t";
        let align = match rest.strip_prefix("St11align_val_t") {
            Some(r) if nothrow(r) => Some(1),
            Some(_) => return None,
            None if nothrow(rest) => None,
            None => return None,
        };
        return Some(HeapFunction::Allocate(Allocation { align, ..Allocation::bytes_at(0) }));
    }
    let rest = name.strip_prefix("_Zd").and_then(|r| r.strip_prefix(['l', 'a']))?;
    let rest = rest.strip_prefix("Pv")?;
    let rest = rest.strip_prefix('m').unwrap_or(rest);
    let rest = rest.strip_prefix("St11align_val_t").unwrap_or(rest);
    matches!(rest, "" | "RKSt9nothrow_t").then_some(HeapFunction::Release)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_allocators_name_their_operands() {
        let calloc = HeapFunction::of("calloc");
        assert_eq!(
            calloc,
            Some(HeapFunction::Allocate(Allocation {
                bytes: 1,
                count: Some(0),
                align: None,
                out: None
            }))
        );
        let Some(HeapFunction::Allocate(pm)) = HeapFunction::of("posix_memalign") else {
            panic!("posix_memalign is an allocator")
        };
        assert!(!pm.returns_block());
        assert_eq!(HeapFunction::Allocate(pm).min_operands(), 3);
        assert_eq!(HeapFunction::of("realloc"), Some(HeapFunction::Reallocate));
        assert!(HeapFunction::is_release("free"));
        assert_eq!(HeapFunction::of("memcpy"), None);
    }

    #[test]
    fn every_operator_new_and_delete_is_known() {
        for new in ["_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t"] {
            assert!(HeapFunction::returns_new_block(new), "{new}");
        }
        for aligned in
            ["_ZnwmSt11align_val_t", "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t"]
        {
            let Some(HeapFunction::Allocate(a)) = HeapFunction::of(aligned) else {
                panic!("{aligned} allocates")
            };
            assert_eq!((a.bytes, a.align), (0, Some(1)), "{aligned}");
        }
        for delete in [
            "_ZdlPv",
            "_ZdaPv",
            "_ZdlPvm",
            "_ZdaPvm",
            "_ZdlPvSt11align_val_t",
            "_ZdlPvmSt11align_val_t",
            "_ZdaPvmSt11align_val_t",
            "_ZdlPvRKSt9nothrow_t",
            "_ZdlPvSt11align_val_tRKSt9nothrow_t",
        ] {
            assert!(HeapFunction::is_release(delete), "{delete}");
        }
        for other in ["_Znwj", "_ZdlPvj", "_Znwmx", "_ZdlPvSt11align_val_tx", "_Zdl", "_ZnwPv"] {
            assert_eq!(HeapFunction::of(other), None, "{other}");
        }
    }
}
