//! The lab's report: its header, the sections after the table (rolling, fastest, scaling,
//! metrics, breakdown, live) and the Markdown file they go into, which keeps the sections a run
//! did not measure.

use crate::table::{Contender, LabConfig, LabReport};
use crate::{
    breakdown, fastest, live, machine, machine::Machine, metrics, rolling, roofline, scale, scaling,
};
use anyhow::{Context, bail};
use hullsweep_gate::numba::Worker;
use hullsweep_variants::Variant;
use std::path::Path;

/// A section the full lab appends after its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// `rolling`'s certification, fallback cost, window length and adversarial data, each
    /// against simd side by side.
    Rolling,
    /// `fastest` against the best single variant, on the lab's sweep and three small ones.
    Fastest,
    /// `fastest` on 1 and 2 threads, paired, beside the machine's ceiling (default sweep, on a
    /// machine with at least 2 cores), and as whole `hullsweep sweep` processes on 1.5M bars.
    Scaling,
    /// What the metrics cost on the lab's sweep, for the variants a researcher would run them on.
    Metrics,
    /// Where the default sweep's time goes as a whole process, and every variant's roofline
    /// (default sweep only).
    Breakdown,
    /// What a live push costs, beside what a user would do without it.
    Live,
}

impl Section {
    /// The sections a lab run on `cfg` appends, in order. `every_variant`: the run was not
    /// narrowed to some variants; `default_sweep`: it is on the default series and grid, where
    /// the scaling and live sections' targets are set (a lab on other data keeps the old live
    /// section and has no scaling one).
    pub fn planned(cfg: &LabConfig, every_variant: bool, default_sweep: bool) -> Vec<Section> {
        let mut out = Vec::new();
        if cfg
            .contenders
            .iter()
            .any(|c| matches!(c, Contender::Rust(Variant::Rolling | Variant::RollingRayon)))
        {
            out.push(Section::Rolling);
        }
        if every_variant {
            out.push(Section::Fastest);
            if default_sweep && Machine::detect().cores >= 2 {
                out.push(Section::Scaling);
            }
            out.push(Section::Metrics);
            if default_sweep {
                out.push(Section::Breakdown);
                out.push(Section::Live);
            }
        }
        out
    }
}

/// The report as the terminal shows it and as the file gets it: they differ only where the
/// file links a file beside it, which the terminal has nowhere to open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Markdown {
    /// For the terminal.
    pub terminal: String,
    /// For the report file.
    pub file: String,
}

impl Markdown {
    /// The same text for both.
    pub fn new(text: String) -> Markdown {
        Markdown {
            terminal: text.clone(),
            file: text,
        }
    }

    /// Appends `section` after a blank line.
    pub fn append(&mut self, section: &Markdown) {
        self.terminal += "\n";
        self.terminal += &section.terminal;
        self.file += "\n";
        self.file += &section.file;
    }
}

/// Measures and renders `section` on `cfg`'s sweep. `out` is where the report will be written,
/// if anywhere: the rolling section links its flamegraph when one is beside it, and the
/// breakdown writes its roofline chart beside it; `numba_1t_s` is numba single-thread's median
/// in the same run's table ([`LabReport::numba_1t_median`](crate::table::LabReport::numba_1t_median)), which the breakdown states the
/// whole process against. `tick` says what runs next.
pub fn section(
    section: Section,
    cfg: &LabConfig,
    worker: &mut Worker,
    out: Option<&Path>,
    numba_1t_s: Option<f64>,
    tick: impl FnMut(&str),
) -> anyhow::Result<Markdown> {
    Ok(match section {
        Section::Rolling => {
            let workloads = rolling::workloads(&cfg.close, &cfg.params, cfg.fee);
            let rows = rolling::run(&workloads, cfg.rounds, tick)?;
            let beside = |p: &Path| {
                p.parent()
                    .unwrap_or(Path::new("."))
                    .join(rolling::FLAMEGRAPH)
                    .is_file()
            };
            Markdown {
                terminal: rolling::to_markdown(&rows, cfg.rounds, false),
                file: rolling::to_markdown(&rows, cfg.rounds, out.is_some_and(beside)),
            }
        }
        Section::Fastest => {
            let contenders = fastest::contenders(Machine::detect().cores);
            let workloads = fastest::workloads(&cfg.close, &cfg.params, cfg.fee);
            let rows = fastest::run(&workloads, &contenders, cfg.rounds, tick)?;
            Markdown::new(fastest::to_markdown(&rows, &contenders, cfg.rounds))
        }
        Section::Scaling => {
            let before = machine::load_average();
            let exe = std::env::current_exe().context("cannot find this executable")?;
            // The whole processes' series file (12 MB) is kept only for the section.
            let dir =
                std::env::temp_dir().join(format!("hullsweep-scaling-{}", std::process::id()));
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            let rows = scaling::Processes::new(&exe, &dir).and_then(|p| {
                scaling::run(&cfg.close, &cfg.params, cfg.fee, cfg.rounds, Some(&p), tick)
            });
            let _ = std::fs::remove_dir_all(&dir);
            let rows = rows?;
            Markdown::new(scaling::to_markdown(
                &rows,
                cfg.close.len(),
                cfg.params.len(),
                (&before, &machine::load_average()),
            ))
        }
        Section::Metrics => {
            let rows = metrics::run(&cfg.close, &cfg.params, cfg.fee, cfg.rounds, tick)?;
            Markdown::new(metrics::to_markdown(
                &rows,
                cfg.close.len(),
                cfg.params.len(),
                cfg.rounds,
            ))
        }
        Section::Breakdown => {
            let exe = std::env::current_exe().context("cannot find this executable")?;
            let cfg = breakdown::Config::new(exe, cfg.rounds);
            Markdown::new(self::breakdown(&cfg, out, numba_1t_s, tick)?)
        }
        Section::Live => Markdown::new(self::live(worker, cfg.rounds, tick)?),
    })
}

/// Measures and renders the breakdown section, with its roofline chart written beside `out`
/// ([`breakdown::SVG`]) when there is one; `numba_1t_s` as [`section`] has it. `tick` says what
/// runs next.
pub fn breakdown(
    cfg: &breakdown::Config,
    out: Option<&Path>,
    numba_1t_s: Option<f64>,
    tick: impl FnMut(&str),
) -> anyhow::Result<String> {
    let b = breakdown::run(cfg, tick)?;
    if let Some(out) = out {
        let svg = out.with_file_name(breakdown::SVG);
        roofline::svg(&b.rates, &b.ceilings, b.bars, b.combos, &svg)
            .with_context(|| format!("cannot write {}", svg.display()))?;
    }
    Ok(breakdown::to_markdown(&b, breakdown::SVG, numba_1t_s))
}

/// The report's title and the line that names what the lab ran under: date, commit, machine,
/// toolchain, the Python side and the load average at the lab's start and now, at its end.
/// The live and scale sections, which can be measured alone, carry their own.
pub fn header(lab: &LabReport) -> String {
    format!(
        "# The lab: every implementation, gated and timed\n\nWritten by `hullsweep lab --out \
         FILE` (`scripts/reports` writes `reports/lab.md`). {} Python side: {}.\n\n",
        lab.provenance.line(),
        lab.numba_versions
    )
}

/// Measures and renders the live section with `rounds` rounds; fails if a live result was not
/// the batch sweep's. `tick` says what runs next.
pub fn live(worker: &mut Worker, rounds: usize, tick: impl FnMut(&str)) -> anyhow::Result<String> {
    let cfg = live::Config {
        rounds,
        ..Default::default()
    };
    let report = live::run(&cfg, worker, tick)?;
    if !report.all_exact() {
        bail!(
            "a live run's result differs from the batch sweep:\n{}",
            report.to_markdown()
        );
    }
    Ok(report.to_markdown())
}

/// `old` with the live `section` in place of its own, or, for a first one, where the full lab
/// puts it: before the scale section.
pub fn with_live(old: &str, section: &str) -> String {
    match old.find(scale::BEGIN) {
        Some(at) if live::section(old).is_none() => {
            format!("{}{section}\n{}", &old[..at], &old[at..])
        }
        _ => live::splice(old, section),
    }
}

/// `old` with the breakdown `section` in place of its own, or, for a first one, where the full
/// lab puts it: before the live section (or the scale section, or at the end).
pub fn with_breakdown(old: &str, section: &str) -> String {
    let (begin, end) = (breakdown::BEGIN, breakdown::END);
    if let Some(was) = crate::marked::section(old, begin, end) {
        // The blank line before whatever follows stays (the splice drops the old one).
        let at = was.as_ptr() as usize - old.as_ptr() as usize + was.len();
        let gap = if old[at..].trim().is_empty() {
            ""
        } else {
            "\n"
        };
        return crate::marked::splice(old, begin, end, &format!("{section}{gap}"));
    }
    match old.find(live::BEGIN).or_else(|| old.find(scale::BEGIN)) {
        Some(at) => format!("{}{section}\n{}", &old[..at], &old[at..]),
        None => crate::marked::splice(old, begin, end, section),
    }
}

/// Writes the breakdown `section` into the report at `path` ([`with_breakdown`]); a missing
/// file is an empty report.
pub fn write_breakdown(path: &Path, section: &str) -> anyhow::Result<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    std::fs::write(path, with_breakdown(&old, section))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `report` with the sections of `old` that it lacks: the breakdown and live ones (a lab on
/// other data does not measure them) and the scale one (only `lab --scale` writes it).
pub fn keeping(report: &str, old: &str) -> String {
    let mut report = report.to_string();
    if !report.contains(breakdown::BEGIN)
        && let Some(b) = crate::marked::section(old, breakdown::BEGIN, breakdown::END)
    {
        report = with_breakdown(&report, &format!("{b}\n"));
    }
    if !report.contains(live::BEGIN)
        && let Some(live) = live::section(old)
    {
        report = live::splice(&report, &format!("{live}\n"));
    }
    if let Some(scale) = scale::section(old) {
        report = scale::splice(&report, &format!("{scale}\n"));
    }
    report
}

/// Writes the live `section` into the report at `path` ([`with_live`]); a missing file is an
/// empty report.
pub fn write_live(path: &Path, section: &str) -> anyhow::Result<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    std::fs::write(path, with_live(&old, section))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Writes the full lab's `report` to `path`, keeping the sections of the file there that it
/// lacks ([`keeping`]).
pub fn write(path: &Path, report: &str) -> anyhow::Result<()> {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    std::fs::write(path, keeping(report, &old))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live_section(body: &str) -> String {
        format!("{}\n## Live\n{body}\n{}\n", live::BEGIN, live::END)
    }

    fn scale_section(body: &str) -> String {
        format!("{}\n## Scale\n{body}\n{}\n", scale::BEGIN, scale::END)
    }

    #[test]
    fn a_first_live_section_goes_before_the_scale_section() {
        let old = format!("# Lab\n\n{}", scale_section("s"));
        let new = live_section("l");
        assert_eq!(
            with_live(&old, &new),
            format!("# Lab\n\n{new}\n{}", scale_section("s"))
        );
        let again = with_live(&with_live(&old, &new), &live_section("m"));
        assert_eq!(live::section(&again), Some(live_section("m").trim_end()));
    }

    fn breakdown_section(body: &str) -> String {
        format!(
            "{}\n## Breakdown\n{body}\n{}\n",
            breakdown::BEGIN,
            breakdown::END
        )
    }

    #[test]
    fn a_breakdown_goes_before_the_live_section_and_is_replaced_in_place() {
        let b = |body| breakdown_section(body);
        let old = format!("# Lab\n\n{}\n{}", live_section("l"), scale_section("s"));
        let one = with_breakdown(&old, &b("one"));
        assert_eq!(
            one,
            format!(
                "# Lab\n\n{}\n{}\n{}",
                b("one"),
                live_section("l"),
                scale_section("s")
            )
        );
        let two = with_breakdown(&one, &b("two"));
        assert_eq!(two, one.replace("one", "two"));
        assert_eq!(
            with_breakdown("# Lab\n", &b("x")),
            format!("# Lab\n\n{}", b("x"))
        );
        let only_scale = format!("# Lab\n\n{}", scale_section("s"));
        assert_eq!(
            with_breakdown(&only_scale, &b("x")),
            format!("# Lab\n\n{}\n{}", b("x"), scale_section("s"))
        );
        // A full lab on other data keeps the old breakdown, before the live section.
        let kept = keeping("# New\n", &two);
        let at = |m: &str| kept.find(m).unwrap();
        assert!(at(breakdown::BEGIN) < at(live::BEGIN) && at(live::BEGIN) < at(scale::BEGIN));
        assert!(kept.contains("two"), "{kept}");
    }

    #[test]
    fn a_rewrite_keeps_the_sections_it_lacks() {
        let old = format!("# Old\n\n{}\n{}", live_section("l"), scale_section("s"));
        let kept = keeping("# New\n", &old);
        assert!(kept.starts_with("# New\n"));
        assert_eq!(live::section(&kept), Some(live_section("l").trim_end()));
        assert_eq!(scale::section(&kept), Some(scale_section("s").trim_end()));
        let fresh = format!("# New\n\n{}", live_section("n"));
        assert_eq!(
            live::section(&keeping(&fresh, &old)),
            Some(live_section("n").trim_end())
        );
    }
}
