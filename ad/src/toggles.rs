//! Switches of synthesis spelled as pass toggles: `--passes=-cache-licm,-lane-packing`
//! mixes them with pass names, so that ablation scripts toggle either the same way. Each
//! option set takes its words out of the list before the pass manager sees the rest.

/// Takes the words of `list` naming a toggle in `names` (`-name` off, `+name` or `name`
/// on) out of the comma-separated list, calling `set(name, on)` for each; returns the
/// remaining words, `None` when the list was not empty and nothing is left.
pub fn take(list: &str, names: &[(&str, &str)], mut set: impl FnMut(&str, bool)) -> Option<String> {
    let mut rest = Vec::new();
    for word in list.split(',') {
        let (on, name) = parse(word);
        if names.iter().any(|(known, _)| *known == name) {
            set(name, on);
        } else {
            rest.push(word);
        }
    }
    if rest.is_empty() && !list.trim().is_empty() {
        return None;
    }
    Some(rest.join(","))
}

/// A toggle word's setting and name: `-name` is off, `+name` and `name` on.
pub fn parse(word: &str) -> (bool, &str) {
    let word = word.trim();
    match word.split_at(word.len().min(1)) {
        ("-", name) => (false, name),
        ("+", name) => (true, name),
        _ => (true, word),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toggles_leave_the_list_and_the_rest_stays_in_order() {
        let names = [("alpha", ""), ("beta", "")];
        let mut seen = Vec::new();
        let rest =
            take("-licm,-alpha,gvn,+beta,alpha", &names, |n, on| seen.push((n.to_string(), on)));
        assert_eq!(rest.as_deref(), Some("-licm,gvn"));
        assert_eq!(seen, [("alpha".into(), false), ("beta".into(), true), ("alpha".into(), true)]);
        assert_eq!(take("-alpha", &names, |_, _| {}), None);
        assert_eq!(take("", &names, |_, _| {}).as_deref(), Some(""));
        assert_eq!(take("-", &names, |_, _| {}).as_deref(), Some("-"));
    }
}
