//! What section 5b reads from the Apple-core builds: each side's hot loop, its shape and
//! llvm-mca's cost of it, plus the target and the study's ratio the prediction is held against.

pub(super) const TRIPLE: &str = "aarch64-unknown-linux-gnu";
/// The study's measured Rust reference / numba ratio on its M2 Max.
pub(super) const STUDY_RATIO: f64 = 1.13;

/// What this section measured (statically) and where its files are.
// `pub(crate)` because `report::Inputs` carries it; the private `apple` module still keeps it
// inside `report`.
pub(crate) struct AppleCodegen {
    pub(super) cpu: String,
    pub(super) rustc: Option<String>,
    pub(super) numba: Option<String>,
    pub(super) mca: Option<(String, String)>,
    pub(super) loops: Vec<AppleLoop>,
    pub(super) notes: Vec<String>,
}

/// One side's WMA hot loop for the Apple core.
pub(super) struct AppleLoop {
    pub(super) who: &'static str,
    pub(super) file: String,
    pub(super) insns: Vec<String>,
    /// Window elements per iteration: the adds into the running sum (a `.2d` add counts two).
    pub(super) elements: usize,
    /// Of those, the adds that each wait for the previous one (one accumulator register).
    pub(super) chain: usize,
    pub(super) check_in_loop: bool,
    /// A bounds check elsewhere in the function (the remainder loop, the setup).
    pub(super) check_in_function: bool,
    pub(super) conversion: String,
    pub(super) mca: Option<Mca>,
}

/// llvm-mca's reading of one loop body.
pub(super) struct Mca {
    /// Resource-bound cycles per iteration (no dependencies).
    pub(super) rthroughput: f64,
    /// Simulated cycles per iteration over many iterations (loop-carried dependencies included).
    pub(super) cycles: f64,
    pub(super) fadd: Option<u32>,
    pub(super) fmul: Option<u32>,
}

impl AppleLoop {
    pub(super) fn cycles_per_element(&self) -> Option<f64> {
        self.mca.as_ref().map(|m| m.cycles / self.elements as f64)
    }

    /// Whether the serial add chain, not the resources, sets the loop's pace in the model.
    pub(super) fn chain_bound(&self) -> Option<bool> {
        let m = self.mca.as_ref()?;
        let chain = self.chain as f64 * f64::from(m.fadd?);
        Some(chain >= m.rthroughput && (m.cycles - chain).abs() <= 0.1 * chain)
    }
}
