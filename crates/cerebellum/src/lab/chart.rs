//! The lab's chart (feature `plotters`): steps to completion per run, one line per arm,
//! as SVG.
//!
//! ```
//! use cerebellum::lab::{LabConfig, chart, run_lab};
//! let on = run_lab(&LabConfig::default())?;
//! let off = run_lab(&LabConfig { gate: false, ..LabConfig::default() })?;
//! let svg = chart::svg(&[&on, &off])?;
//! assert!(svg.starts_with("<svg") && svg.contains("steps to completion"));
//! # Ok::<(), cerebellum::Error>(())
//! ```

use std::path::Path;

use plotters::prelude::*;

use super::LabReport;
use crate::error::Result;

const WIDTH: u32 = 820;
const HEIGHT: u32 = 480;

fn chart_error(err: impl std::fmt::Display) -> crate::Error {
    maxim_core::Error::Encode { kind: "svg".into(), reason: err.to_string() }.into()
}

/// The chart of `reports` (one line each, labelled by its gate) as an SVG document. Runs
/// that executed the poisoned skill are marked with a cross.
pub fn svg(reports: &[&LabReport]) -> Result<String> {
    let n_runs = reports.iter().map(|r| r.runs.len()).max().unwrap_or(0).max(1);
    let max_steps = reports.iter().flat_map(|r| r.runs.iter().map(|x| x.steps)).max().unwrap_or(1).max(1);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Skill lab: reset a stuck deploy, steps to completion per run", ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0.5f64..(n_runs as f64 + 0.5), 0f64..(max_steps as f64 * 1.15))
            .map_err(chart_error)?;
        chart
            .configure_mesh()
            .x_desc("run")
            .y_desc("steps to completion")
            .x_labels(n_runs)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(chart_error)?;
        let palette = [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44)];
        for (i, report) in reports.iter().enumerate() {
            let color = palette[i % palette.len()];
            let points: Vec<(f64, f64)> =
                report.runs.iter().map(|r| (r.run as f64, r.steps as f64)).collect();
            let label = format!("gate {}", if report.config.gate { "on" } else { "off" });
            chart
                .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
                .map_err(chart_error)?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
                .map_err(chart_error)?;
            let poisoned = report.runs.iter().filter(|r| r.poison_executed);
            chart
                .draw_series(
                    poisoned.map(|r| Cross::new((r.run as f64, r.steps as f64), 9, BLACK.stroke_width(2))),
                )
                .map_err(chart_error)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(chart_error)?;
        root.present().map_err(chart_error)?;
    }
    Ok(out)
}

/// Writes [`svg`] of `reports` to `path` (not atomically: a chart is a report, not state).
pub fn write_svg(path: impl AsRef<Path>, reports: &[&LabReport]) -> Result<()> {
    let path = path.as_ref();
    let doc = svg(reports)?;
    std::fs::write(path, doc).map_err(|e| maxim_core::Error::io(path, e))?;
    Ok(())
}
