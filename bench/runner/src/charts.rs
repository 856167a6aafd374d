//! SVG charts (plotters): a Figure-10-style relative-speed chart (per benchmark input, the
//! speed of the gradient with AD after optimization, with AD before it, and of the clang
//! primal, on a log scale) and an ablation chart (geometric-mean slowdown with each pass
//! disabled).

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use crate::results::{InputResult, Outcome, Report, AFTER_CLANG_O2, BEFORE_OPT, DEFAULT};

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

/// The bars of one group in the relative-speed chart: legend text, colour, and how to
/// read the variant's time from one input's results.
struct Series {
    legend: &'static str,
    colour: RGBColor,
    time: fn(&InputResult) -> Option<f64>,
}

const SPEED_SERIES: [Series; 4] = [
    Series {
        legend: "gradient, AD after opt (-O0 bitcode)",
        colour: RGBColor(31, 119, 180),
        time: |r| r.gradient_median(DEFAULT),
    },
    Series {
        legend: "gradient, AD after opt (clang -O2 bitcode)",
        colour: RGBColor(44, 160, 44),
        time: |r| r.gradient_median(AFTER_CLANG_O2),
    },
    Series {
        legend: "gradient, AD before opt (-O0 bitcode)",
        colour: RGBColor(214, 39, 40),
        time: |r| r.gradient_median(BEFORE_OPT),
    },
    Series {
        legend: "primal, clang -O2",
        colour: RGBColor(127, 127, 127),
        time: |r| r.native_primal.median(),
    },
];

/// Figure-10 style: per input, the speed of each gradient variant and of the clang primal
/// relative to the clang primal (= 1), on a log axis, so the gap between the after and
/// before bars is the after-vs-before speedup. A variant that was not timed has no bar.
pub fn relative_speed(report: &Report, path: &Path) -> Result<()> {
    let draw_error = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let inputs: Vec<&InputResult> =
        report.results.iter().filter(|r| matches!(r.native_primal, Outcome::Timed(_))).collect();
    // speeds[input][series]: clang primal time / variant time.
    let speeds: Vec<Vec<Option<f64>>> = inputs
        .iter()
        .map(|r| {
            let primal = r.native_primal.median();
            SPEED_SERIES.iter().map(|s| primal.zip((s.time)(r)).map(|(p, t)| p / t)).collect()
        })
        .collect();
    let present = || speeds.iter().flatten().flatten().copied().filter(|v| *v > 0.0);
    let low = present().fold(1.0_f64, f64::min) / 2.0;
    let high = present().fold(1.0_f64, f64::max) * 2.0;

    let root = SVGBackend::new(path, (1100, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(&e))?;
    let (chart_area, legend_area) = root.split_vertically(510);
    let count = inputs.len().max(1);
    let caption = if inputs.is_empty() {
        "Relative speed (no data: nothing was timed)".to_string()
    } else {
        "Relative speed, clang -O2 primal = 1 (log scale, higher is faster)".to_string()
    };
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((0..count).into_segmented(), (low..high).log_scale())
        .map_err(|e| draw_error(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc("speed relative to the clang primal")
        .y_label_formatter(&|v| format!("{v:.3}"))
        .x_labels(count)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => {
                inputs.get(*i).map(|r| format!("{} {}", r.bench, r.input)).unwrap_or_default()
            }
            _ => String::new(),
        })
        .draw()
        .map_err(|e| draw_error(&e))?;

    // Bars are drawn in pixels: each input's segment is split into one slot per series.
    let segment_width = {
        let left = chart.backend_coord(&(SegmentValue::Exact(0), 1.0)).0;
        let right = chart.backend_coord(&(SegmentValue::Exact(1), 1.0)).0;
        (right - left).max(8)
    };
    let bar_width = (segment_width * 8 / 10) / SPEED_SERIES.len() as i32;
    let baseline = chart.backend_coord(&(SegmentValue::Exact(0), low)).1;
    for (i, input_speeds) in speeds.iter().enumerate() {
        let segment_left = chart.backend_coord(&(SegmentValue::Exact(i), 1.0)).0 + segment_width / 10;
        for (k, speed) in input_speeds.iter().enumerate() {
            let Some(speed) = speed else { continue };
            let x0 = segment_left + k as i32 * bar_width;
            let top = chart.backend_coord(&(SegmentValue::Exact(i), *speed)).1;
            let style = SPEED_SERIES[k].colour.filled();
            root.draw(&Rectangle::new([(x0, top), (x0 + bar_width - 2, baseline)], style))
                .map_err(|e| draw_error(&e))?;
            let label = if *speed >= 0.1 { format!("{speed:.2}") } else { format!("{speed:.1e}") };
            root.draw(&Text::new(label, (x0, top - 14), ("sans-serif", 11).into_font()))
                .map_err(|e| draw_error(&e))?;
        }
    }
    for (k, series) in SPEED_SERIES.iter().enumerate() {
        let x = 90 + (k as i32 % 2) * 480;
        let y = 12 + (k as i32 / 2) * 30;
        legend_area
            .draw(&Rectangle::new([(x, y), (x + 18, y + 14)], series.colour.filled()))
            .map_err(|e| draw_error(&e))?;
        legend_area
            .draw(&Text::new(series.legend, (x + 26, y), ("sans-serif", 15).into_font()))
            .map_err(|e| draw_error(&e))?;
    }
    root.present().map_err(|e| draw_error(&e))?;
    Ok(())
}

/// Geometric-mean gradient slowdown over the timed inputs with each pass (or other
/// ablation) disabled.
pub fn ablation(report: &Report, path: &Path) -> Result<()> {
    let (labels, values): (Vec<String>, Vec<f64>) = report
        .ablations
        .iter()
        .filter_map(|a| report.ablation_geomean(a).map(|g| (a.clone(), g)))
        .unzip();
    bar_chart(
        path,
        "Gradient slowdown with one pass disabled (geometric mean, 1.0 = default)",
        "slowdown",
        &labels,
        &values,
    )
}
