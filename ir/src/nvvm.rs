//! The names of the nvvm intrinsics that give a GPU thread its identity and synchronize
//! it: special registers (`llvm.nvvm.read.ptx.sreg.*`), block-wide barriers and memory
//! barriers. One list for the simulated grid (`interp::grid`), the PTX emitter and GPU
//! reverse mode, so that the three agree on what exists.

/// A component of CUDA's `dim3`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }
}

/// A special register read by `llvm.nvvm.read.ptx.sreg.<name>`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SpecialRegister {
    /// Thread index in its block (`threadIdx`).
    Tid(Axis),
    /// Block dimensions (`blockDim`).
    Ntid(Axis),
    /// Block index in the grid (`blockIdx`).
    Ctaid(Axis),
    /// Grid dimensions (`gridDim`).
    Nctaid(Axis),
    WarpSize,
    LaneId,
    WarpId,
    NWarpId,
    SmId,
}

const SREG_PREFIX: &str = "llvm.nvvm.read.ptx.sreg.";

impl SpecialRegister {
    /// The register an intrinsic named `name` reads, if it is one.
    pub fn from_intrinsic(name: &str) -> Option<SpecialRegister> {
        let rest = name.strip_prefix(SREG_PREFIX)?;
        if let Some((base, axis)) = rest.split_once('.') {
            let axis = Axis::ALL.into_iter().find(|a| a.name() == axis)?;
            return Some(match base {
                "tid" => SpecialRegister::Tid(axis),
                "ntid" => SpecialRegister::Ntid(axis),
                "ctaid" => SpecialRegister::Ctaid(axis),
                "nctaid" => SpecialRegister::Nctaid(axis),
                _ => return None,
            });
        }
        Some(match rest {
            "warpsize" => SpecialRegister::WarpSize,
            "laneid" => SpecialRegister::LaneId,
            "warpid" => SpecialRegister::WarpId,
            "nwarpid" => SpecialRegister::NWarpId,
            "smid" => SpecialRegister::SmId,
            _ => return None,
        })
    }

    /// The PTX name without its axis (`tid`, `warpsize`), and the axis.
    fn parts(self) -> (&'static str, Option<Axis>) {
        match self {
            SpecialRegister::Tid(a) => ("tid", Some(a)),
            SpecialRegister::Ntid(a) => ("ntid", Some(a)),
            SpecialRegister::Ctaid(a) => ("ctaid", Some(a)),
            SpecialRegister::Nctaid(a) => ("nctaid", Some(a)),
            SpecialRegister::WarpSize => ("warpsize", None),
            SpecialRegister::LaneId => ("laneid", None),
            SpecialRegister::WarpId => ("warpid", None),
            SpecialRegister::NWarpId => ("nwarpid", None),
            SpecialRegister::SmId => ("smid", None),
        }
    }

    /// The intrinsic that reads it (`llvm.nvvm.read.ptx.sreg.tid.x`); it takes nothing
    /// and returns an `i32`.
    pub fn intrinsic(self) -> String {
        match self.parts() {
            (base, Some(axis)) => format!("{SREG_PREFIX}{base}.{}", axis.name()),
            (base, None) => format!("{SREG_PREFIX}{base}"),
        }
    }

    /// Its PTX operand (`%tid.x`; the warp size is the constant `WARP_SZ`).
    pub fn ptx(self) -> String {
        match self.parts() {
            ("warpsize", _) => "WARP_SZ".to_string(),
            (base, Some(axis)) => format!("%{base}.{}", axis.name()),
            (base, None) => format!("%{base}"),
        }
    }
}

/// A block-wide barrier (`__syncthreads`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Barrier {
    /// `llvm.nvvm.barrier0()`: barrier 0.
    Zero,
    /// `llvm.nvvm.barrier.sync(id)`, `llvm.nvvm.bar.sync(id)`,
    /// `llvm.nvvm.barrier.cta.sync.aligned.all(id)`: the barrier named by the operand.
    WithId,
}

/// The intrinsic `barrier0`, what synthesized code calls.
pub const BARRIER0: &str = "llvm.nvvm.barrier0";

impl Barrier {
    pub fn from_intrinsic(name: &str) -> Option<Barrier> {
        match name {
            BARRIER0 => Some(Barrier::Zero),
            "llvm.nvvm.barrier.sync"
            | "llvm.nvvm.bar.sync"
            | "llvm.nvvm.barrier.cta.sync.aligned.all" => Some(Barrier::WithId),
            _ => None,
        }
    }
}

/// The level of a memory barrier intrinsic (`llvm.nvvm.membar.gl` -> `gl`), which is
/// PTX's `membar.<level>`.
pub fn memory_barrier(name: &str) -> Option<&'static str> {
    match name {
        "llvm.nvvm.membar.cta" => Some("cta"),
        "llvm.nvvm.membar.gl" => Some("gl"),
        "llvm.nvvm.membar.sys" => Some("sys"),
        _ => None,
    }
}

/// How a warp shuffle picks its source lane (PTX `shfl.sync.<mode>`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ShuffleMode {
    /// From lane `b`.
    Idx,
    /// From lane `laneid ^ b` (butterfly: the steps of a warp reduction).
    Bfly,
    /// From lane `laneid - b`.
    Up,
    /// From lane `laneid + b`.
    Down,
}

/// A warp-level operation over the lanes of a member mask.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// `llvm.nvvm.activemask() -> i32`: the lanes executing this call together.
    ActiveMask,
    /// `llvm.nvvm.shfl.sync.<mode>.i32(mask, value, b, c) -> i32` (PTX `shfl.sync`):
    /// `value` of the source lane; `c` packs the segment mask and clamp (31 for a whole
    /// warp).
    Shuffle(ShuffleMode),
    /// `llvm.nvvm.vote.all.sync(mask, i1) -> i1`: whether the predicate holds in every
    /// lane of the mask.
    VoteAll,
}

impl WarpOp {
    pub fn from_intrinsic(name: &str) -> Option<WarpOp> {
        let rest = name.strip_prefix("llvm.nvvm.")?;
        Some(match rest {
            "activemask" => WarpOp::ActiveMask,
            "vote.all.sync" => WarpOp::VoteAll,
            "shfl.sync.idx.i32" => WarpOp::Shuffle(ShuffleMode::Idx),
            "shfl.sync.bfly.i32" => WarpOp::Shuffle(ShuffleMode::Bfly),
            "shfl.sync.up.i32" => WarpOp::Shuffle(ShuffleMode::Up),
            "shfl.sync.down.i32" => WarpOp::Shuffle(ShuffleMode::Down),
            _ => return None,
        })
    }

    pub fn intrinsic(self) -> &'static str {
        match self {
            WarpOp::ActiveMask => "llvm.nvvm.activemask",
            WarpOp::VoteAll => "llvm.nvvm.vote.all.sync",
            WarpOp::Shuffle(ShuffleMode::Idx) => "llvm.nvvm.shfl.sync.idx.i32",
            WarpOp::Shuffle(ShuffleMode::Bfly) => "llvm.nvvm.shfl.sync.bfly.i32",
            WarpOp::Shuffle(ShuffleMode::Up) => "llvm.nvvm.shfl.sync.up.i32",
            WarpOp::Shuffle(ShuffleMode::Down) => "llvm.nvvm.shfl.sync.down.i32",
        }
    }

    /// The mode name in PTX (`idx`, `bfly`, `up`, `down`) of a shuffle.
    pub fn shuffle_mode_name(mode: ShuffleMode) -> &'static str {
        match mode {
            ShuffleMode::Idx => "idx",
            ShuffleMode::Bfly => "bfly",
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
        }
    }
}

/// Whether a call to `name` only reads a special register (all are integers: ids, dims,
/// clocks) or orders memory: it carries no derivative.
pub fn is_inactive(name: &str) -> bool {
    name.starts_with(SREG_PREFIX) || memory_barrier(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_op_names_round_trip() {
        let modes = [ShuffleMode::Idx, ShuffleMode::Bfly, ShuffleMode::Up, ShuffleMode::Down];
        let ops =
            [WarpOp::ActiveMask, WarpOp::VoteAll].into_iter().chain(modes.map(WarpOp::Shuffle));
        for op in ops {
            assert_eq!(WarpOp::from_intrinsic(op.intrinsic()), Some(op));
        }
        assert_eq!(WarpOp::from_intrinsic("llvm.nvvm.shfl.sync.bfly.f32"), None);
    }

    #[test]
    fn names_round_trip() {
        let mut all = vec![
            SpecialRegister::WarpSize,
            SpecialRegister::LaneId,
            SpecialRegister::WarpId,
            SpecialRegister::NWarpId,
            SpecialRegister::SmId,
        ];
        for a in Axis::ALL {
            all.extend([
                SpecialRegister::Tid(a),
                SpecialRegister::Ntid(a),
                SpecialRegister::Ctaid(a),
                SpecialRegister::Nctaid(a),
            ]);
        }
        for r in all {
            assert_eq!(SpecialRegister::from_intrinsic(&r.intrinsic()), Some(r));
        }
        assert_eq!(SpecialRegister::Ctaid(Axis::Y).ptx(), "%ctaid.y");
        assert_eq!(SpecialRegister::WarpSize.ptx(), "WARP_SZ");
        assert_eq!(SpecialRegister::from_intrinsic("llvm.nvvm.read.ptx.sreg.tid.w"), None);
        assert_eq!(SpecialRegister::from_intrinsic("llvm.nvvm.read.ptx.sreg.clock"), None);
        assert_eq!(Barrier::from_intrinsic(BARRIER0), Some(Barrier::Zero));
        assert_eq!(Barrier::from_intrinsic("llvm.nvvm.bar.sync"), Some(Barrier::WithId));
        assert!(is_inactive("llvm.nvvm.membar.gl") && is_inactive("llvm.nvvm.read.ptx.sreg.tid.x"));
        assert!(!is_inactive(BARRIER0) && is_inactive("llvm.nvvm.read.ptx.sreg.clock"));
    }
}
