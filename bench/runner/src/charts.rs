//! SVG charts (plotters): a Figure-10-style relative-speed chart (per benchmark input, the
//! speed of the gradient with AD after optimization, with AD before it, and of the clang
//! primal) and an ablation chart (geometric-mean slowdown with each pass disabled). Both
//! are grouped bar charts on a log axis with a red reference line at 1.

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::results::{
    InputResult, Outcome, Report, AFTER_CLANG_O2_SCALAR, AFTER_CLANG_O2_VEC, BEFORE_OPT, DEFAULT,
};

/// One kind of bar: its legend text and colour.
struct Series {
    legend: &'static str,
    colour: RGBColor,
}

/// A grouped bar chart: `values[group][series]`, a missing value draws no bar.
struct BarChart<'a> {
    title: &'a str,
    y_desc: &'a str,
    groups: &'a [String],
    series: &'a [Series],
    values: &'a [Vec<Option<f64>>],
}

/// Draws `chart` to an SVG file. Bars are placed in pixels (each group's slot split into
/// one bar per series), which keeps the x axis free of plotters' segment arithmetic.
fn draw(path: &Path, chart: &BarChart) -> Result<()> {
    let draw_error = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let present = || chart.values.iter().flatten().flatten().copied().filter(|v| *v > 0.0);
    let low = present().fold(1.0_f64, f64::min) / 1.6;
    let high = present().fold(1.0_f64, f64::max) * 1.6;
    let legend_rows = chart.series.len().div_ceil(2) as u32;
    let height = 540 + 30 * legend_rows;
    let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(&e))?;
    let (plot_area, legend_area) = root.split_vertically(540);
    let groups = chart.groups.len().max(1);
    let caption = if chart.groups.is_empty() {
        format!("{} (no data: nothing was timed)", chart.title)
    } else {
        chart.title.to_string()
    };
    let mut plot = ChartBuilder::on(&plot_area)
        .caption(caption, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(70)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..groups as f64, (low..high).log_scale())
        .map_err(|e| draw_error(&e))?;
    plot.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(chart.y_desc)
        .y_label_formatter(&|v| format!("{v:.3}"))
        .draw()
        .map_err(|e| draw_error(&e))?;
    plot.draw_series(LineSeries::new([(0.0, 1.0), (groups as f64, 1.0)], RED.stroke_width(1)))
        .map_err(|e| draw_error(&e))?;

    let pixel = |x: f64, y: f64| plot.backend_coord(&(x, y));
    let baseline = pixel(0.0, low).1;
    let bar_width = {
        let group_width = pixel(1.0, 1.0).0 - pixel(0.0, 1.0).0;
        ((group_width * 8 / 10) / chart.series.len().max(1) as i32).max(2)
    };
    let value_font = ("sans-serif", 11).into_font();
    let group_font = ("sans-serif", 13)
        .into_font()
        .into_text_style(&root)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (g, (name, values)) in chart.groups.iter().zip(chart.values).enumerate() {
        let left = pixel(g as f64 + 0.1, 1.0).0;
        for (k, value) in values.iter().enumerate() {
            let Some(value) = value.filter(|v| *v > 0.0) else { continue };
            let x0 = left + k as i32 * bar_width;
            let top = pixel(g as f64, value).1;
            let colour = chart.series[k].colour.filled();
            root.draw(&Rectangle::new([(x0, top), (x0 + bar_width - 2, baseline)], colour))
                .map_err(|e| draw_error(&e))?;
            let label = if value >= 0.1 { format!("{value:.2}") } else { format!("{value:.1e}") };
            root.draw(&Text::new(label, (x0, top - 14), value_font.clone()))
                .map_err(|e| draw_error(&e))?;
        }
        let centre = pixel(g as f64 + 0.5, 1.0).0;
        root.draw(&Text::new(name.clone(), (centre, baseline + 8), group_font.clone()))
            .map_err(|e| draw_error(&e))?;
    }
    if chart.series.len() > 1 {
        for (k, series) in chart.series.iter().enumerate() {
            let x = 90 + (k as i32 % 2) * 480;
            let y = 6 + (k as i32 / 2) * 30;
            legend_area
                .draw(&Rectangle::new([(x, y), (x + 18, y + 14)], series.colour.filled()))
                .map_err(|e| draw_error(&e))?;
            legend_area
                .draw(&Text::new(series.legend, (x + 26, y), ("sans-serif", 15).into_font()))
                .map_err(|e| draw_error(&e))?;
        }
    }
    root.present().map_err(|e| draw_error(&e))?;
    Ok(())
}

/// How to read one bar's time from an input's results.
type TimeOf = fn(&InputResult) -> Option<f64>;

/// The bars of the relative-speed chart, with how to read each one's time from an input.
const SPEED_SERIES: [(Series, TimeOf); 5] = [
    (
        Series { legend: "gradient, AD after opt (-O0 bitcode)", colour: RGBColor(31, 119, 180) },
        |r| r.gradient_best(DEFAULT),
    ),
    (
        Series {
            legend: "gradient, AD after opt (clang -O2 -fno-vectorize bitcode)",
            colour: RGBColor(44, 160, 44),
        },
        |r| r.gradient_best(AFTER_CLANG_O2_SCALAR),
    ),
    (
        Series {
            legend: "gradient, AD after opt (clang -O2 bitcode)",
            colour: RGBColor(255, 127, 14),
        },
        |r| r.gradient_best(AFTER_CLANG_O2_VEC),
    ),
    (
        Series { legend: "gradient, AD before opt (-O0 bitcode)", colour: RGBColor(214, 39, 40) },
        |r| r.gradient_best(BEFORE_OPT),
    ),
    (Series { legend: "primal, clang -O2", colour: RGBColor(127, 127, 127) }, |r| {
        r.native_primal.best()
    }),
];

/// Figure-10 style: per input, the speed of each gradient variant and of the clang primal
/// relative to the clang primal (= 1), on a log axis, so that the gap between the after
/// and before bars is the after-vs-before speedup. A variant not timed has no bar.
pub fn relative_speed(report: &Report, path: &Path) -> Result<()> {
    let inputs: Vec<&InputResult> =
        report.results.iter().filter(|r| matches!(r.native_primal, Outcome::Timed(_))).collect();
    let groups: Vec<String> = inputs.iter().map(|r| format!("{} {}", r.bench, r.input)).collect();
    let values: Vec<Vec<Option<f64>>> = inputs
        .iter()
        .map(|r| {
            let primal = r.native_primal.best();
            SPEED_SERIES.iter().map(|(_, time)| primal.zip(time(r)).map(|(p, t)| p / t)).collect()
        })
        .collect();
    let series: Vec<Series> =
        SPEED_SERIES.iter().map(|(s, _)| Series { legend: s.legend, colour: s.colour }).collect();
    draw(
        path,
        &BarChart {
            title: "Relative speed, clang -O2 primal = 1 (log scale, higher is faster)",
            y_desc: "speed relative to the clang primal",
            groups: &groups,
            series: &series,
            values: &values,
        },
    )
}

/// Geometric-mean gradient slowdown over the timed inputs with each pass (or other
/// ablation) disabled.
pub fn ablation(report: &Report, path: &Path) -> Result<()> {
    let (groups, values): (Vec<String>, Vec<Vec<Option<f64>>>) = report
        .ablations
        .iter()
        .filter_map(|a| report.ablation_geomean(a).map(|g| (a.clone(), vec![Some(g)])))
        .unzip();
    let series = [Series { legend: "slowdown", colour: RGBColor(31, 119, 180) }];
    draw(
        path,
        &BarChart {
            title: "Gradient slowdown with one pass disabled (geometric mean, 1 = default)",
            y_desc: "slowdown (log scale)",
            groups: &groups,
            series: &series,
            values: &values,
        },
    )
}
