//! SVG charts (plotters): a Figure-10-style relative-speed chart (gradient speed with AD
//! after optimization relative to AD before it, per benchmark input) and an ablation chart
//! (geometric-mean slowdown with each pass disabled).

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::results::Report;

/// One bar per label, a value label on each, and a dashed-looking reference line at 1.
fn bar_chart(
    path: &Path,
    title: &str,
    y_desc: &str,
    labels: &[String],
    values: &[f64],
) -> Result<()> {
    let draw_error = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let root = SVGBackend::new(path, (960, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(&e))?;
    let count = labels.len().max(1);
    let top = values.iter().copied().filter(|v| v.is_finite()).fold(1.0_f64, f64::max) * 1.2;
    let caption = if labels.is_empty() {
        format!("{title} (no data: nothing was timed)")
    } else {
        title.to_string()
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(70)
        .y_label_area_size(64)
        .build_cartesian_2d((0..count).into_segmented(), 0.0..top)
        .map_err(|e| draw_error(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc(y_desc)
        .x_labels(count)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .draw()
        .map_err(|e| draw_error(&e))?;
    chart
        .draw_series(
            Histogram::vertical(&chart)
                .style(BLUE.mix(0.6).filled())
                .margin(12)
                .data(values.iter().enumerate().map(|(i, v)| (i, *v))),
        )
        .map_err(|e| draw_error(&e))?;
    chart
        .draw_series(values.iter().enumerate().map(|(i, v)| {
            Text::new(
                format!("{v:.2}x"),
                (SegmentValue::CenterOf(i), *v),
                ("sans-serif", 14).into_font(),
            )
        }))
        .map_err(|e| draw_error(&e))?;
    chart
        .draw_series(LineSeries::new(
            [(SegmentValue::Exact(0), 1.0), (SegmentValue::Last, 1.0)],
            RED.stroke_width(1),
        ))
        .map_err(|e| draw_error(&e))?;
    root.present().map_err(|e| draw_error(&e))?;
    Ok(())
}

/// Gradient speed with AD after optimization relative to AD before optimization.
pub fn relative_speed(report: &Report, path: &Path) -> Result<()> {
    let (labels, values): (Vec<String>, Vec<f64>) = report
        .results
        .iter()
        .filter_map(|r| {
            r.after_vs_before_speedup().map(|s| (format!("{} {}", r.bench, r.input), s))
        })
        .unzip();
    bar_chart(
        path,
        "Gradient speed: AD after optimization vs AD before (1.0 = before)",
        "speedup",
        &labels,
        &values,
    )
}

/// Geometric-mean gradient slowdown over the timed inputs with each pass disabled.
pub fn ablation(report: &Report, path: &Path) -> Result<()> {
    let (labels, values): (Vec<String>, Vec<f64>) = report
        .ablations
        .iter()
        .filter_map(|a| report.ablation_geomean(a).map(|g| (a.clone(), g)))
        .unzip();
    bar_chart(
        path,
        "Gradient slowdown with one pass disabled (geometric mean)",
        "slowdown",
        &labels,
        &values,
    )
}
