//! The research plots: each writes a well-formed SVG with its title, refuses bad input by naming
//! it, refuses a non-`.svg` name, writes all or nothing, and subsamples a large scatter.

use hullsweep_data::{MAX_SCATTER_POINTS, is_oos_scatter, logit_histogram, walk_forward_equity};
use std::path::{Path, PathBuf};

/// Deterministic noise in [-1, 1) (a 64-bit LCG), so the tests need no random crate.
fn noise(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// The SVG at `path`, its text unescaped, after checking that it is a whole SVG document.
fn svg(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}",
        &text[..text.len().min(80)]
    );
    assert!(text.trim_end().ends_with("</svg>"));
    assert_eq!(text.matches("<svg").count(), 1);
    assert_eq!(
        text.matches("<text").count(),
        text.matches("</text>").count()
    );
    text.replace("&apos;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The contents of the SVG's text elements, trimmed.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>')?.1.split_once("</text>"))
        .map(|(inside, _)| inside.trim())
        .collect()
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The error's message, which must name `path`.
fn error_of(path: &Path, result: anyhow::Result<()>) -> String {
    let message = format!("{:#}", result.unwrap_err());
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(
        !path.exists(),
        "{message}: yet {} was written",
        path.display()
    );
    message
}

/// The files in `dir`: a refused or failed plot leaves no temporary file behind.
fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

#[test]
fn logit_histogram_draws_its_title_and_key() {
    let d = dir();
    let path = d.path().join("logits.svg");
    let logits: Vec<f64> = noise(12_870, 1).iter().map(|x| 3.0 * x + 0.4).collect();
    logit_histogram(&path, &logits, 0.62).unwrap();
    let text = svg(&path);
    assert!(text.contains("PBO 0.62: logits of the in-sample best's OOS rank (12,870 splits)"));
    let below = logits.iter().filter(|&&l| l <= 0.0).count();
    let below = format!("{},{:03}", below / 1000, below % 1000);
    assert!(
        text.contains(&format!("({below} of 12,870 splits)")),
        "{below}"
    );
    assert!(text.contains("logit > 0"));
    assert!(text.contains("<rect"));
}

#[test]
fn logit_histogram_draws_equal_logits_and_a_single_split() {
    let d = dir();
    for (name, logits, pbo, splits) in [
        ("equal", vec![0.7; 70], 0.0, "(70 splits)"),
        ("zero", vec![0.0; 20], 1.0, "(20 splits)"),
        ("single", vec![-1.25], 1.0, "(1 split)"),
        (
            "two-values",
            vec![-0.7, 0.7, 0.7, -0.7, 0.7],
            0.4,
            "(5 splits)",
        ),
    ] {
        let path = d.path().join(format!("{name}.svg"));
        logit_histogram(&path, &logits, pbo).unwrap();
        let text = svg(&path);
        assert!(text.contains(&format!("PBO {pbo:.2}:")), "{name}");
        assert!(text.contains(splits), "{name}");
    }
    let text = svg(&d.path().join("zero.svg"));
    assert!(
        text.contains("(20 of 20 splits)"),
        "a logit of 0 counts as at or below"
    );
}

#[test]
fn scatter_draws_axes_line_and_equation() {
    let d = dir();
    let path = d.path().join("is_oos.svg");
    let is: Vec<f64> = noise(12_870, 2).iter().map(|x| 0.05 + 0.02 * x).collect();
    let oos: Vec<f64> = noise(12_870, 3).iter().map(|x| 0.03 * x).collect();
    is_oos_scatter(&path, &is, &oos, -0.2025, 0.0113, 0.004, "sharpe").unwrap();
    let text = svg(&path);
    for want in [
        "In-sample vs out-of-sample sharpe of the in-sample best (12,870 splits)",
        "in-sample sharpe",
        "out-of-sample sharpe",
        "OOS = -0.2025 \u{d7} IS + 0.01130 (R\u{b2} 0.00)",
    ] {
        assert!(text.contains(want), "{want}");
    }
    assert!(!text.contains("evenly strided"));
    // Every split is drawn, and the key's marker.
    assert_eq!(text.matches("<circle").count(), 12_870 + 1);
}

#[test]
fn scatter_subsamples_above_the_limit_and_says_so() {
    let d = dir();
    let n = MAX_SCATTER_POINTS + 5_000;
    let is = noise(n, 4);
    let oos = noise(n, 5);
    let path = d.path().join("many.svg");
    is_oos_scatter(&path, &is, &oos, 0.1, -0.2, 0.01, "mean").unwrap();
    let text = svg(&path);
    assert!(
        text.contains("25,000 splits, an evenly strided 20,000 drawn"),
        "no subsample note"
    );
    assert_eq!(text.matches("<circle").count(), MAX_SCATTER_POINTS + 1);
    assert!(text.contains("OOS = 0.1000 \u{d7} IS - 0.2000"));

    let at = d.path().join("at_limit.svg");
    let n = MAX_SCATTER_POINTS;
    is_oos_scatter(&at, &is[..n], &oos[..n], 0.1, -0.2, 0.01, "mean").unwrap();
    let text = svg(&at);
    assert!(text.contains("(20,000 splits)") && !text.contains("evenly strided"));
}

#[test]
fn walk_forward_names_windows_and_final_pnl() {
    let d = dir();
    let path = d.path().join("wf.svg");
    let returns: Vec<f64> = noise(3_000, 6).iter().map(|x| x + 0.01).collect();
    let total: f64 = returns.iter().sum();
    let starts = [0, 500, 1000, 1500, 2000, 2500];
    let selected = [17, 3, 17, 42, 8, 1];
    walk_forward_equity(&path, &returns, &starts, &selected).unwrap();
    let text = svg(&path);
    let title =
        format!("Walk-forward out-of-sample equity: 6 test windows, final OOS PnL {total:+.2} pp");
    assert!(text.contains(&title), "{title}");
    let labels: Vec<String> = selected.iter().map(|k| format!("#{k}")).collect();
    let drawn: Vec<&str> = texts(&text)
        .into_iter()
        .filter(|t| t.starts_with('#'))
        .collect();
    assert_eq!(drawn, labels);

    // Past 12 windows none is named; a long series is drawn as its envelope.
    let many = d.path().join("many.svg");
    let returns = noise(100_000, 7);
    let starts: Vec<usize> = (0..13).map(|w| w * 7_000).collect();
    walk_forward_equity(&many, &returns, &starts, &[5; 13]).unwrap();
    let text = svg(&many);
    assert!(text.contains("13 test windows"));
    assert!(!texts(&text).iter().any(|t| t.starts_with('#')));
    assert!(text.contains("too many to name"));
    assert!(std::fs::metadata(&many).unwrap().len() < 400_000);

    // One window, one bar.
    let one = d.path().join("one.svg");
    walk_forward_equity(&one, &[-0.5], &[0], &[9]).unwrap();
    assert!(svg(&one).contains("1 test window, final OOS PnL -0.50 pp"));
}

#[test]
fn non_svg_names_are_refused() {
    let d = dir();
    for name in ["plot.png", "plot", "plot.svg.png", "plot.SVGZ"] {
        let path = d.path().join(name);
        let said = error_of(&path, logit_histogram(&path, &[0.1, -0.2], 0.5));
        assert!(said.contains("not an .svg file name"), "{said}");
        error_of(
            &path,
            is_oos_scatter(&path, &[1.0], &[1.0], 0.0, 0.0, 0.0, "x"),
        );
        error_of(&path, walk_forward_equity(&path, &[1.0], &[0], &[0]));
    }
    // The extension is matched without regard to case.
    let upper = d.path().join("PLOT.SVG");
    logit_histogram(&upper, &[0.1, -0.2], 0.5).unwrap();
    svg(&upper);
}

#[test]
fn bad_values_are_named_by_index() {
    let d = dir();
    let path = d.path().join("bad.svg");
    let said = error_of(
        &path,
        logit_histogram(&path, &[0.1, 0.2, 0.3, f64::NAN], 0.5),
    );
    assert!(said.contains("logits[3] = NaN"), "{said}");
    let said = error_of(&path, logit_histogram(&path, &[], 0.5));
    assert!(said.contains("logits is empty"), "{said}");
    let said = error_of(&path, logit_histogram(&path, &[0.1], 1.5));
    assert!(said.contains("pbo = 1.5"), "{said}");
    let said = error_of(&path, logit_histogram(&path, &[0.1], f64::NAN));
    assert!(said.contains("pbo = NaN"), "{said}");

    let ok = [0.1, 0.2, 0.3];
    let scatter = |is: &[f64], oos: &[f64], slope: f64| {
        error_of(
            &path,
            is_oos_scatter(&path, is, oos, slope, 0.0, 0.5, "sharpe"),
        )
    };
    let said = scatter(&ok, &[0.1, f64::INFINITY, 0.0], 1.0);
    assert!(said.contains("oos[1] = inf"), "{said}");
    let said = scatter(&[f64::NEG_INFINITY, 0.0, 0.0], &ok, 1.0);
    assert!(said.contains("is[0] = -inf"), "{said}");
    let said = scatter(&ok, &ok[..2], 1.0);
    assert!(said.contains("is has 3 values and oos has 2"), "{said}");
    let said = scatter(&[], &[], 1.0);
    assert!(said.contains("is is empty"), "{said}");
    let said = scatter(&ok, &ok, f64::NAN);
    assert!(said.contains("slope = NaN"), "{said}");

    let said = error_of(
        &path,
        walk_forward_equity(&path, &[0.1, f64::NAN], &[0], &[0]),
    );
    assert!(said.contains("oos_returns[1] = NaN"), "{said}");
    let bars = [0.1; 10];
    for (starts, selected, want) in [
        (&[][..], &[][..], "window_starts is empty"),
        (
            &[0, 5],
            &[1],
            "window_starts has 2 values and selected has 1",
        ),
        (&[2, 5], &[1, 2], "window_starts[0] = 2"),
        (
            &[0, 5, 5],
            &[1, 2, 3],
            "window_starts[2] = 5 is not after window_starts[1] = 5",
        ),
        (
            &[0, 10],
            &[1, 2],
            "window_starts[1] = 10 is past the last of the 10",
        ),
    ] {
        let said = error_of(&path, walk_forward_equity(&path, &bars, starts, selected));
        assert!(said.contains(want), "{said}");
    }
    let said = error_of(&path, walk_forward_equity(&path, &[], &[0], &[0]));
    assert!(said.contains("oos_returns is empty"), "{said}");
    assert!(files(d.path()).is_empty(), "{:?}", files(d.path()));
}

#[test]
fn a_refused_plot_leaves_the_old_file_as_it_was() {
    let d = dir();
    let path = d.path().join("kept.svg");
    std::fs::write(&path, "old").unwrap();
    let result = logit_histogram(&path, &[f64::NAN], 0.5);
    assert!(result.is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    logit_histogram(&path, &[0.5], 0.0).unwrap();
    svg(&path);
    assert_eq!(files(d.path()), [path]);
}

/// Samples to look at: `cargo test -p hullsweep-data --test research_plot -- --ignored`, written
/// to `$HULLSWEEP_PLOT_DIR` (default `/tmp/plots`).
#[test]
#[ignore]
fn samples() {
    let dir = PathBuf::from(std::env::var("HULLSWEEP_PLOT_DIR").unwrap_or("/tmp/plots".into()));
    std::fs::create_dir_all(&dir).unwrap();
    // Logits of 12,870 splits over 200 combos: ranks skewed low, so PBO is above a half.
    let combos = 200.0;
    let logits: Vec<f64> = noise(12_870, 11)
        .iter()
        .zip(noise(12_870, 12))
        .map(|(a, b)| {
            let rank = ((a + b) / 2.0 * 0.5 + 0.42).clamp(0.0, 0.999) * combos + 1.0;
            let w = rank.floor() / (combos + 1.0);
            (w / (1.0 - w)).ln()
        })
        .collect();
    let pbo = logits.iter().filter(|&&l| l <= 0.0).count() as f64 / logits.len() as f64;
    logit_histogram(&dir.join("logits.svg"), &logits, pbo).unwrap();
    logit_histogram(&dir.join("logits_single.svg"), &[0.35], 0.0).unwrap();

    for (name, n) in [("is_oos.svg", 12_870), ("is_oos_big.svg", 1_000_000)] {
        let a = noise(n, 13);
        let b = noise(n, 14);
        let is: Vec<f64> = a.iter().map(|x| 0.04 + 0.015 * x.abs()).collect();
        let oos: Vec<f64> = is
            .iter()
            .zip(&b)
            .map(|(i, e)| 0.004 - 0.3 * (i - 0.04) + 0.02 * e)
            .collect();
        is_oos_scatter(&dir.join(name), &is, &oos, -0.3, 0.016, 0.05, "sharpe").unwrap();
    }

    let returns: Vec<f64> = noise(6_000, 15).iter().map(|x| 0.6 * x + 0.004).collect();
    let starts: Vec<usize> = (0..8).map(|w| w * 750).collect();
    let selected = [17, 3, 17, 42, 8, 1, 1_234, 56];
    walk_forward_equity(&dir.join("walk_forward.svg"), &returns, &starts, &selected).unwrap();
    let returns: Vec<f64> = noise(200_000, 16).iter().map(|x| 0.6 * x - 0.001).collect();
    let starts: Vec<usize> = (0..40).map(|w| w * 5_000).collect();
    let selected: Vec<usize> = (0..40).map(|w| w * 7 % 31).collect();
    walk_forward_equity(
        &dir.join("walk_forward_many.svg"),
        &returns,
        &starts,
        &selected,
    )
    .unwrap();
}
