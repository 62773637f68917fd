//! Sections of a generated report between two marker comments: find one, or replace it, so a
//! command that regenerates one section of a report keeps the rest as it was.

/// The text from `begin` to the first `end` after it (markers included), if `report` has it.
pub fn section<'a>(report: &'a str, begin: &str, end: &str) -> Option<&'a str> {
    let a = report.find(begin)?;
    let b = report[a..].find(end)? + a;
    Some(&report[a..b + end.len()])
}

/// `report` with its `begin`..`end` section replaced by `new` (the newlines after the old
/// section dropped: `new` brings its own), or `new` appended after a blank line.
pub fn splice(report: &str, begin: &str, end: &str, new: &str) -> String {
    match section(report, begin, end) {
        Some(old) => {
            let a = old.as_ptr() as usize - report.as_ptr() as usize;
            let rest = &report[a + old.len()..];
            format!("{}{new}{}", &report[..a], rest.trim_start_matches('\n'))
        }
        None => format!("{}\n\n{new}", report.trim_end_matches('\n')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_replaced_and_the_rest_kept() {
        let (b, e) = ("<!-- x -->", "<!-- /x -->");
        let report = format!("# Lab\n\n{b}\nold\n{e}\n\n## Next\n{e}\n");
        let new = format!("{b}\nnew\n{e}\n");
        assert_eq!(
            splice(&report, b, e, &new),
            format!("# Lab\n\n{b}\nnew\n{e}\n## Next\n{e}\n")
        );
        let old = format!("{b}\nold\n{e}");
        assert_eq!(section(&report, b, e), Some(old.as_str()));
        assert_eq!(splice("# Lab\n", b, e, &new), format!("# Lab\n\n{new}"));
        // An end marker before the begin marker is not a section.
        assert_eq!(section(&format!("{e}\n{b}\n"), b, e), None);
    }
}
