//! Property tests over random valid modules (see `generate`): they verify, and the
//! verifier neither panics nor accepts garbage the printer cannot print when the modules
//! are corrupted at random.

mod generate;

use adc_ir::text::print_module;
use adc_ir::verify::verify_module;
use adc_ir::*;
use cranelift_entity::EntityRef;
use proptest::prelude::*;

use generate::{any_type, constant, Choices, Symbols};

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_modules_verify(m in generate::module()) {
        if let Err(diagnostics) = verify_module(&m.0) {
            prop_assert!(false, "{diagnostics}");
        }
    }

    #[test]
    fn verifier_survives_mutations(
        m in generate::module(),
        mutations in prop::collection::vec(prop::collection::vec(any::<u32>(), 12), 1..6),
    ) {
        let mut module = m.0;
        for choices in &mutations {
            mutate(&mut module, choices);
        }
        match verify_module(&module) {
            Ok(()) => {
                // Whatever the verifier accepts, the printer must be able to print.
                let _ = print_module(&module);
            }
            Err(diagnostics) => {
                prop_assert!(!diagnostics.0.is_empty());
                let _ = diagnostics.to_string();
                let _ = diagnostics.render("mutated.adir", "");
            }
        }
    }
}

/// The generator reaches every opcode: guards against a generator that silently stopped
/// producing some instruction (the properties would then test less than they claim).
#[test]
fn generator_covers_every_opcode() {
    let mut seen = std::collections::HashSet::new();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..400 {
        let choices: Vec<u32> = (0..3000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u32
            })
            .collect();
        let module = generate::generate(&choices);
        assert!(verify_module(&module).is_ok(), "{}", print_module(&module));
        for func in module.functions.values() {
            for (_, inst) in func.layout.insts() {
                seen.insert(func.dfg.insts[inst].opcode_name());
            }
        }
    }
    let all = adc_ir::all_opcode_names();
    let missing: Vec<&str> = all.into_iter().filter(|o| !seen.contains(o)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

/// `Some(i)` below `len`, or `None` when there is nothing to pick.
fn pick(len: usize, choice: u32) -> Option<usize> {
    (len > 0).then(|| choice as usize % len)
}

/// An entity index that is usually valid and sometimes just past the end.
fn entity(len: usize, choice: u32) -> usize {
    choice as usize % (len + 3)
}

/// Corrupts one thing in a random defined function: an operand, a type, a block call, the
/// layout, an instruction's payload, a signature.
fn mutate(module: &mut Module, c: &[u32]) {
    let n_funcs = module.functions.len();
    let defined: Vec<FuncId> =
        module.functions.keys().filter(|f| !module.functions[*f].is_declaration()).collect();
    let Some(which) = pick(defined.len(), c[0]) else {
        return;
    };
    let func = &mut module.functions[defined[which]];
    let n_insts = func.dfg.insts.len();
    let n_values = func.dfg.values.len();
    let n_blocks = func.dfg.blocks.len();
    let laid_out: Vec<Inst> = func.layout.insts().map(|(_, i)| i).collect();
    let Some(inst) = pick(n_insts, c[2]).map(Inst::new) else {
        return;
    };
    let some_laid_out = pick(laid_out.len(), c[3]).map(|i| laid_out[i]);
    let chooser = Choices::new(&c[6..]);
    let random_type = |mut ch: Choices| any_type(&mut ch, 1);
    match c[1] % 16 {
        0 => {
            let mut k = 0;
            let target = c[4] as usize % 4;
            let new = Value::new(entity(n_values, c[5]));
            func.dfg.insts[inst].map_args(|v| {
                k += 1;
                if k - 1 == target {
                    new
                } else {
                    v
                }
            });
        }
        1 => {
            if let Some(v) = pick(n_values, c[4]) {
                func.dfg.values[Value::new(v)].ty = random_type(chooser);
            }
        }
        2 => {
            let targets = func.dfg.insts[inst].branch_targets_mut();
            if let Some(t) = pick(targets.len(), c[4]) {
                let call = targets.into_iter().nth(t).expect("picked in range");
                match c[5] % 3 {
                    0 => call.args.push(Value::new(entity(n_values, c[6]))),
                    1 => {
                        call.args.pop();
                    }
                    _ => call.block = Block::new(entity(n_blocks, c[6])),
                }
            }
        }
        3 => func.layout.remove_inst(inst),
        4 => {
            if let Some(before) = some_laid_out {
                func.layout.remove_inst(inst);
                func.layout.insert_inst_before(inst, before);
            }
        }
        5 => {
            // Lays out `inst` a second time, or lays out a nonexistent instruction.
            if let Some(before) = some_laid_out {
                let inst = if c[4].is_multiple_of(2) {
                    inst
                } else {
                    Inst::new(n_insts + c[5] as usize % 3)
                };
                func.layout.insert_inst_before(inst, before);
            }
        }
        6 => {
            let block = Block::new(c[4] as usize % n_blocks.max(1));
            if func.dfg.blocks.is_valid(block) {
                func.layout.remove_block(block);
            }
        }
        7 => {
            let block = Block::new(entity(n_blocks, c[4]));
            if let Some(&before) =
                func.layout.blocks().get(c[5] as usize % func.layout.blocks().len().max(1))
            {
                func.layout.insert_block_before(block, before);
            }
        }
        8 => {
            let other = Inst::new(c[4] as usize % n_insts);
            let data = func.dfg.insts[other].clone();
            func.dfg.insts[inst] = data;
        }
        9 => {
            if let InstructionData::Call { callee, .. } = &mut func.dfg.insts[inst] {
                *callee = FuncId::new(entity(n_funcs, c[4]));
            }
        }
        10 => {
            let mut ch = chooser;
            let ty = any_type(&mut ch, 1);
            let symbols = Symbols { globals: 4, funcs: n_funcs + 2 };
            let value = constant(&mut ch, &ty, &symbols);
            let ty = if c[4].is_multiple_of(2) { ty } else { random_type(Choices::new(&c[9..])) };
            func.dfg.insts[inst] = InstructionData::Const { ty, value };
        }
        11 => match &mut func.dfg.insts[inst] {
            InstructionData::Reduce { args, .. } | InstructionData::Call { args, .. } => {
                args.truncate(c[4] as usize % 2);
            }
            InstructionData::Shuffle { mask, .. } => mask.push(Some(c[4] % 64)),
            InstructionData::ExtractValue { indices, .. }
            | InstructionData::InsertValue { indices, .. } => {
                indices.push(c[4] % 4);
            }
            InstructionData::CmpXchg { failure, .. } => *failure = Ordering::ALL[c[4] as usize % 6],
            InstructionData::Switch { cases, .. } => {
                if let Some(first) = cases.first().cloned() {
                    cases.push(first);
                }
            }
            InstructionData::Load { align, .. } | InstructionData::Store { align, .. } => {
                *align = c[4] % 9
            }
            _ => {}
        },
        12 => {
            if let Some(b) = pick(n_blocks, c[4]) {
                let params = &mut func.dfg.blocks[Block::new(b)].params;
                if c[5].is_multiple_of(2) {
                    params.pop();
                } else {
                    params.push(Value::new(entity(n_values, c[6])));
                }
            }
        }
        13 => {
            let sig = &mut func.signature;
            match c[4] % 3 {
                0 => {
                    sig.params.pop();
                }
                1 => sig.ret = Some(random_type(chooser)),
                _ => sig.ret = None,
            }
        }
        14 => {
            let flag_bits = (c[4] % (1 << 13)) as u16;
            match &mut func.dfg.insts[inst] {
                InstructionData::Binary { flags, .. }
                | InstructionData::Unary { flags, .. }
                | InstructionData::Fma { flags, .. }
                | InstructionData::Fcmp { flags, .. }
                | InstructionData::Select { flags, .. }
                | InstructionData::PtrAdd { flags, .. }
                | InstructionData::Reduce { flags, .. } => *flags = InstFlags(flag_bits),
                _ => {}
            }
        }
        _ => {
            // A fresh instruction, with a result of a random type, in a random place.
            let ty = (c[4].is_multiple_of(2)).then(|| random_type(chooser));
            let data = InstructionData::Unary {
                op: UnaryOp::ALL[c[5] as usize % UnaryOp::ALL.len()],
                flags: InstFlags::empty(),
                arg: Value::new(entity(n_values, c[6])),
            };
            let new = func.dfg.make_inst(data, ty);
            if let Some(before) = some_laid_out {
                func.layout.insert_inst_before(new, before);
            }
        }
    }
}

/// How many single mutations leave a valid module, per kind of mutation (run with
/// `--ignored --nocapture`): a kind whose mutants nearly all verify mutates too little.
#[test]
#[ignore]
fn mutation_stats() {
    let mut state = 12345u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 32) as u32
    };
    let (mut ok, mut total) = ([0; 16], [0; 16]);
    for _ in 0..4000 {
        let choices: Vec<u32> = (0..3000).map(|_| next()).collect();
        let mut m = generate::generate(&choices);
        let c: Vec<u32> = (0..12).map(|_| next()).collect();
        mutate(&mut m, &c);
        let kind = (c[1] % 16) as usize;
        total[kind] += 1;
        if verify_module(&m).is_ok() {
            ok[kind] += 1;
        }
    }
    for k in 0..16 {
        println!("kind {k}: {} of {} still verify", ok[k], total[k]);
    }
}

/// `cargo test -p adc-ir --test properties -- --ignored --nocapture show_sample` prints a
/// generated module, to see what the generator makes.
#[test]
#[ignore]
fn show_sample() {
    let seed: u64 = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let choices: Vec<u32> = (0..3000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u32
        })
        .collect();
    println!("{}", print_module(&generate::generate(&choices)));
}
