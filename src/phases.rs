//! Wall-clock time of the phases of `adc build` outside the pass manager's own table:
//! import, the two pipelines, differentiation, verification and code generation, printed
//! with `--time-passes` (issue 30: where a build's time goes, every phase included).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// The phases in the order they ran; a phase that runs twice (verification) adds up.
/// Details are parts of the phase before them, shown indented and not added to the total.
#[derive(Debug, Default, Clone)]
pub struct PhaseTimes {
    phases: Vec<(&'static str, Duration)>,
    details: Vec<(&'static str, &'static str, Duration)>,
}

impl PhaseTimes {
    /// Runs `work` and adds its wall-clock time to phase `name`.
    pub fn time<T>(&mut self, name: &'static str, work: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let result = work();
        self.add(name, start.elapsed());
        result
    }

    pub fn add(&mut self, name: &'static str, time: Duration) {
        match self.phases.iter_mut().find(|(n, _)| *n == name) {
            Some((_, total)) => *total += time,
            None => self.phases.push((name, time)),
        }
    }

    /// A phase that ran before the ones recorded (the import, timed by the caller).
    pub fn add_first(&mut self, name: &'static str, time: Duration) {
        self.phases.insert(0, (name, time));
    }

    /// `name`, a part of phase `of` that took `time`.
    pub fn add_detail(&mut self, of: &'static str, name: &'static str, time: Duration) {
        self.details.push((of, name, time));
    }

    /// The time recorded for phase `name` (zero when it did not run).
    pub fn time_of(&self, name: &str) -> Duration {
        self.phases.iter().filter(|(n, _)| *n == name).map(|(_, t)| *t).sum()
    }

    pub fn total(&self) -> Duration {
        self.phases.iter().map(|(_, t)| *t).sum()
    }

    /// The table `--time-passes` prints after the pass tables: each phase's milliseconds
    /// and share of the build.
    pub fn table(&self) -> String {
        let total = self.total().as_secs_f64();
        let mut out = String::from("; build phases\n");
        let _ = writeln!(out, ";      {:<24} {:>10} {:>6}", "phase", "time (ms)", "%");
        for (name, time) in &self.phases {
            let share = if total > 0.0 { 100.0 * time.as_secs_f64() / total } else { 0.0 };
            let _ =
                writeln!(out, ";      {name:<24} {:>10.3} {share:>6.1}", time.as_secs_f64() * 1e3);
            for (_, detail, time) in self.details.iter().filter(|(of, _, _)| of == name) {
                let share = if total > 0.0 { 100.0 * time.as_secs_f64() / total } else { 0.0 };
                let ms = time.as_secs_f64() * 1e3;
                let _ = writeln!(out, ";        {detail:<22} {ms:>10.3} {share:>6.1}");
            }
        }
        let _ = writeln!(out, ";      {:<24} {:>10.3}", "total", total * 1e3);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_phases_add_up_and_shares_sum_to_the_total() {
        let mut phases = PhaseTimes::default();
        phases.add("import", Duration::from_millis(30));
        phases.add("verification", Duration::from_millis(10));
        phases.add("verification", Duration::from_millis(60));
        assert_eq!(phases.total(), Duration::from_millis(100));
        let table = phases.table();
        assert!(table.contains("verification") && table.contains("70.0"), "{table}");
        assert_eq!(table.matches("verification").count(), 1, "{table}");
        assert_eq!(phases.time("codegen", || 7), 7);
        phases.add_detail("verification", "of the IR", Duration::from_millis(20));
        assert!(phases.total() < Duration::from_millis(110), "details are not added");
        assert!(phases.table().contains(";        of the IR"), "{}", phases.table());
        phases.add_first("reading", Duration::ZERO);
        assert!(phases.table().lines().nth(2).unwrap().contains("reading"), "{}", phases.table());
    }
}
