use adc_ir::text::parse_module;
use adc_ir::{InstructionData, Module};

use super::{Neighbor, Privacy, ThreadPrivateLoads};

/// A kernel `@k` that reads `%x[gid * stride]` (type `ty`) and `%z[gid]`, and adds them
/// into `%y[gid]`; `attrs` go on the parameters `%x` and `%z`, `extra` before the return.
fn kernel(ty: &str, stride: u32, attrs: &str, extra: &str) -> Module {
    let size = if ty == "f64" { 8 } else { 4 };
    let text = format!(
        "target \"nvptx64-nvidia-cuda\"
declare @llvm.nvvm.read.ptx.sreg.ctaid.x() -> i32
declare @llvm.nvvm.read.ptx.sreg.ntid.x() -> i32
declare @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
declare @llvm.nvvm.barrier0()
func @k(%x: ptr {attrs}, %z: ptr {attrs}, %y: ptr) kernel {{
^bb0:
  %ctaid = call @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul nuw nsw i32 %ntid, %ctaid
  %tid = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = add nuw nsw i32 %tid, %base
  %i64 = sext %i to i64
  %stride = const i64 {stride}
  %xoff = mul i64 %i64, %stride
  %px = ptradd ptr %x, %xoff
  %xv = load {ty}, %px, align 4
  %size = const i64 {size}
  %off = mul i64 %i64, %size
  %pz = ptradd ptr %z, %off
  %zv = load {ty}, %pz, align 4
  %py = ptradd ptr %y, %off
  %yv = load {ty}, %py, align 4
  %s1 = fadd {ty} %xv, %zv
  %s2 = fadd {ty} %s1, %yv
  store %s2, %py, align 4
{extra}  ret
}}
"
    );
    parse_module(&text).unwrap_or_else(|d| panic!("{d:?}\n{text}"))
}

/// The privacy of the loads of `@k`, in order (x, z, y).
fn privacy(module: &Module) -> Vec<Option<Privacy>> {
    let id = module.function_by_name("k").expect("kernel");
    let f = &module.functions[id];
    let facts = ThreadPrivateLoads::compute(module, id, |_| true);
    f.layout
        .insts()
        .filter(|(_, inst)| matches!(f.dfg.insts[*inst], InstructionData::Load { .. }))
        .map(|(_, inst)| facts.privacy(inst))
        .collect()
}

#[test]
fn reads_may_share_memory_with_other_parameters() {
    // x and z may be the same array shifted: thread i's x[i] can be thread j's z[j].
    let loads = privacy(&kernel("f64", 8, "", ""));
    assert_eq!(loads, [None, None, Some(Privacy::Exclusive)]);
}

#[test]
fn noalias_reads_indexed_by_the_thread_are_private() {
    let loads = privacy(&kernel("f64", 8, "noalias", ""));
    let indexed = Some(Privacy::ByThreadIndex);
    assert_eq!(loads, [indexed, indexed, Some(Privacy::Exclusive)]);
}

#[test]
fn a_stride_below_the_element_size_overlaps_neighbours() {
    // x[gid * 4 bytes] read as f64: thread i's bytes overlap thread i+1's.
    let loads = privacy(&kernel("f64", 4, "noalias", ""));
    assert_eq!(loads, [None, Some(Privacy::ByThreadIndex), Some(Privacy::Exclusive)]);
}

#[test]
fn barriers_and_atomics_make_nothing_private() {
    let barrier = "  call @llvm.nvvm.barrier0()\n";
    assert_eq!(privacy(&kernel("f32", 4, "noalias", barrier)), [None, None, None]);
    let atomic = "  %one = const f32 1.0\n  %old = atomicrmw fadd f32 %y, %one monotonic\n";
    assert_eq!(privacy(&kernel("f32", 4, "noalias", atomic)), [None, None, None]);
}

#[test]
fn addresses_without_the_lane_index_are_tried_for_warp_reductions() {
    let text = "target \"nvptx64-nvidia-cuda\"
declare @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
declare @llvm.nvvm.read.ptx.sreg.tid.y() -> i32
func @k(%w: ptr, %x: ptr, %out: ptr) kernel {
^bb0:
  %tx = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call @llvm.nvvm.read.ptx.sreg.tid.y()
  %ty64 = zext %ty to i64
  %eight = const i64 8
  %row = mul i64 %ty64, %eight
  %pw = ptradd ptr %w, %row
  %wv = load f64, %pw, align 8
  %tx64 = zext %tx to i64
  %col = mul i64 %tx64, %eight
  %px = ptradd ptr %x, %col
  %xv = load f64, %px, align 8
  %p = fmul f64 %wv, %xv
  %pout = ptradd ptr %out, %col
  %pout2 = ptradd ptr %pout, %row
  store %p, %pout2, align 8
  ret
}
";
    let module = parse_module(text).unwrap_or_else(|d| panic!("{d:?}"));
    let id = module.function_by_name("k").expect("kernel");
    let f = &module.functions[id];
    let facts = ThreadPrivateLoads::compute(&module, id, |_| true);
    let shared: Vec<bool> = f
        .layout
        .insts()
        .filter(|(_, inst)| matches!(f.dfg.insts[*inst], InstructionData::Load { .. }))
        .map(|(_, inst)| facts.likely_shared_in_warp(inst))
        .collect();
    // w[threadIdx.y]: the same in a row of lanes; x[threadIdx.x]: one per lane.
    assert_eq!(shared, [true, false]);
}

#[test]
fn stencil_reads_form_a_neighbor_group_around_their_home_load() {
    let text = "target \"nvptx64-nvidia-cuda\"
declare @llvm.nvvm.read.ptx.sreg.tid.x() -> i32
func @k(%in: ptr, %out: ptr) kernel {
^bb0:
  %tx = call @llvm.nvvm.read.ptx.sreg.tid.x()
  %tx64 = zext %tx to i64
  %eight = const i64 8
  %off = mul i64 %tx64, %eight
  %pc = ptradd ptr %in, %off
  %minus = const i64 -8
  %pl = ptradd ptr %pc, %minus
  %l = load f64, %pl, align 8
  %c = load f64, %pc, align 8
  %plus = const i64 16
  %pr = ptradd ptr %pc, %plus
  %r = load f64, %pr, align 8
  %s1 = fadd f64 %l, %c
  %s2 = fadd f64 %s1, %r
  %po = ptradd ptr %out, %off
  store %s2, %po, align 8
  ret
}
";
    let module = parse_module(text).unwrap_or_else(|d| panic!("{d:?}"));
    let id = module.function_by_name("k").expect("kernel");
    let f = &module.functions[id];
    let facts = ThreadPrivateLoads::compute(&module, id, |_| true);
    let loads: Vec<_> = f
        .layout
        .insts()
        .filter(|(_, inst)| matches!(f.dfg.insts[*inst], InstructionData::Load { .. }))
        .map(|(_, inst)| inst)
        .collect();
    let home = loads[1];
    let group: Vec<_> = loads.iter().map(|l| facts.neighbor(*l)).collect();
    assert_eq!(
        group,
        [
            Some(Neighbor { home, offset: -1, flush: true }),
            Some(Neighbor { home, offset: 0, flush: false }),
            Some(Neighbor { home, offset: 2, flush: false }),
        ]
    );
}
