//! The chart descriptions the sections hand to `py/charts.py`, and the `charts.json` that
//! carries them, so that the SVGs are drawn from the same numbers as the text.

/// Chart description for charts.py.
#[derive(serde::Serialize)]
pub(super) struct Chart {
    pub(super) file: String,
    pub(super) title: String,
    pub(super) xlabel: String,
    pub(super) labels: Vec<String>,
    pub(super) values: Vec<f64>,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub(super) reference: Option<f64>,
}

pub(super) fn charts_json(charts: &[Chart]) -> Result<String, String> {
    #[derive(serde::Serialize)]
    struct Charts<'a> {
        charts: &'a [Chart],
    }
    serde_json::to_string_pretty(&Charts { charts })
        .map(|s| s + "\n")
        .map_err(|e| format!("charts.json: {e}"))
}
