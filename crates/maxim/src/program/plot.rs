//! The demo's picture: the navigate tool's success per day with its fitted trend, and per
//! hour of day with its fitted cosinor, side by side in one SVG (plotters' SVG backend).
//!
//! The inputs are plain series ([`SuccessSeries`]) and fit parameters (angular-gyrus'
//! [`TrendFit`] and [`CosinorFit`]), so the picture does not care where they came from.

use std::path::Path;

use maxim::angular_gyrus::fit::{CosinorFit, TrendFit};
use maxim::demo::{DAY_SECS, START, SuccessSeries};
use plotters::prelude::*;

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 460;
const POINTS: RGBColor = RGBColor(31, 119, 180);
const FIT: RGBColor = RGBColor(214, 39, 40);

fn chart_error(err: impl std::fmt::Display) -> String {
    format!("cannot draw the chart: {err}")
}

/// The fitted trend's value on day `x` (counted from [`START`]; the series' days are
/// fitted at their noon).
pub(crate) fn trend_at(fit: &TrendFit, x: f64) -> f64 {
    let t = START.as_secs_f64() + (x + 0.5) * DAY_SECS as f64;
    fit.intercept + fit.slope_per_day * (t - fit.t0_secs) / DAY_SECS as f64
}

/// The fitted cosinor's value at `hour` of the (UTC) day.
pub(crate) fn cosinor_at(fit: &CosinorFit, hour: f64) -> f64 {
    fit.mesor + fit.amplitude * (std::f64::consts::TAU * (hour / fit.period_hours - fit.phase)).cos()
}

/// The picture as an SVG document: `title` above, success per day and the trend line on
/// the left, success per hour of day and the cosinor curve on the right. A fit that is
/// `None` is left out; an empty series gives empty axes.
pub(crate) fn svg(
    title: &str,
    series: &SuccessSeries,
    trend: Option<&TrendFit>,
    cosinor: Option<&CosinorFit>,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let root = root.titled(title, ("sans-serif", 20)).map_err(chart_error)?;
        let (left, right) = root.split_horizontally(WIDTH / 2);

        let first = series.by_day.first().map_or(0.0, |p| p.x);
        let last = series.by_day.last().map_or(1.0, |p| p.x).max(first + 1.0);
        let mut by_day = ChartBuilder::on(&left)
            .caption("success per day, with the fitted trend", ("sans-serif", 16))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d((first - 0.5)..(last + 0.5), 0f64..1.05)
            .map_err(chart_error)?;
        by_day
            .configure_mesh()
            .x_desc("day")
            .y_desc("success rate")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.1}"))
            .draw()
            .map_err(chart_error)?;
        by_day
            .draw_series(series.by_day.iter().map(|p| Circle::new((p.x, p.rate), 4, POINTS.filled())))
            .map_err(chart_error)?
            .label("observed")
            .legend(|(x, y)| Circle::new((x + 10, y), 4, POINTS.filled()));
        if let Some(fit) = trend {
            let line = [first, last].map(|x| (x, trend_at(fit, x).clamp(0.0, 1.05)));
            by_day
                .draw_series(LineSeries::new(line, FIT.stroke_width(2)))
                .map_err(chart_error)?
                .label(format!("trend {:+.4}/day, R² {:.2}", fit.slope_per_day, fit.r_squared))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], FIT.stroke_width(2)));
        }
        by_day
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(chart_error)?;

        let mut by_hour = ChartBuilder::on(&right)
            .caption("success per hour of day (UTC), with the fitted cosinor", ("sans-serif", 16))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0f64..24.0, 0f64..1.05)
            .map_err(chart_error)?;
        by_hour
            .configure_mesh()
            .x_desc("hour of day")
            .y_desc("success rate")
            .x_labels(13)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.1}"))
            .draw()
            .map_err(chart_error)?;
        by_hour
            .draw_series(series.by_hour.iter().map(|p| Circle::new((p.x + 0.5, p.rate), 4, POINTS.filled())))
            .map_err(chart_error)?
            .label("observed")
            .legend(|(x, y)| Circle::new((x + 10, y), 4, POINTS.filled()));
        if let Some(fit) = cosinor {
            let curve = (0..=96).map(|i| {
                let hour = f64::from(i) / 4.0;
                (hour, cosinor_at(fit, hour).clamp(0.0, 1.05))
            });
            by_hour
                .draw_series(LineSeries::new(curve, FIT.stroke_width(2)))
                .map_err(chart_error)?
                .label(format!(
                    "cosinor: peak {} UTC, amplitude {:.2}, R² {:.2}",
                    clock_time(fit.acrophase_hours()),
                    fit.amplitude,
                    fit.r_squared
                ))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], FIT.stroke_width(2)));
        }
        by_hour
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(chart_error)?;
        root.present().map_err(chart_error)?;
    }
    Ok(out)
}

/// Writes [`svg`] to `path`, creating its directory; errors name the path.
pub(crate) fn write_svg(
    path: &Path,
    title: &str,
    series: &SuccessSeries,
    trend: Option<&TrendFit>,
    cosinor: Option<&CosinorFit>,
) -> Result<(), String> {
    let doc = svg(title, series, trend, cosinor)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `hours` after midnight as `HH:MM`.
pub(crate) fn clock_time(hours: f64) -> String {
    let minutes = (hours.rem_euclid(24.0) * 60.0).round() as u32 % (24 * 60);
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

#[cfg(test)]
mod tests {
    use maxim::angular_gyrus::fit::{self, Period};
    use maxim::demo::{Scenario, SuccessSeries};

    use super::*;

    fn series() -> SuccessSeries {
        let scenario = Scenario { seed: 7, days: 14 };
        SuccessSeries::from_outcomes(scenario.days().flat_map(|d| d.navigate_outcomes().collect::<Vec<_>>()))
    }

    #[test]
    fn the_fits_of_the_scenario_find_the_plants_and_the_picture_shows_them() {
        let s = series();
        let trend = fit::fit_trend(&s.day_times(), &s.day_rates()).unwrap();
        let cosinor = fit::fit_cosinor(&s.hour_times(), &s.hour_rates(), Period::DAILY).unwrap();
        assert!((trend.slope_per_day + 0.02).abs() < 0.012, "{trend:?}");
        assert!(trend.r_squared > 0.5, "{trend:?}");
        // The peak in the morning, so the trough (half a day later) in the evening.
        assert!((cosinor.phase - 0.3).abs() < 0.1, "{cosinor:?}");
        // The drawn line goes through the fit.
        let day0 = trend_at(&trend, 0.0);
        assert!((day0 - trend.intercept).abs() < 1e-9);
        assert!((trend_at(&trend, 10.0) - day0 - 10.0 * trend.slope_per_day).abs() < 1e-9);
        assert!(
            (cosinor_at(&cosinor, cosinor.acrophase_hours()) - cosinor.mesor - cosinor.amplitude).abs()
                < 1e-9
        );
        let doc = svg("navigate", &s, Some(&trend), Some(&cosinor)).unwrap();
        assert!(doc.starts_with("<svg") && doc.trim_end().ends_with("</svg>"));
        assert!(doc.contains("success per day") && doc.contains("per hour of day"));
        assert!(doc.contains(&format!("{:+.4}/day", trend.slope_per_day)));
        // One circle per observed point.
        assert_eq!(doc.matches("<circle").count(), s.by_day.len() + s.by_hour.len() + 2);
    }

    #[test]
    fn an_empty_series_still_draws_and_a_bad_path_is_named() {
        let doc = svg("nothing yet", &SuccessSeries::default(), None, None).unwrap();
        assert!(doc.contains("nothing yet"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let err = write_svg(&file.join("x.svg"), "t", &SuccessSeries::default(), None, None).unwrap_err();
        assert!(err.contains("a-file"), "{err}");
    }

    #[test]
    fn clock_times_wrap_and_round() {
        assert_eq!(clock_time(7.2), "07:12");
        assert_eq!(clock_time(19.2), "19:12");
        assert_eq!(clock_time(23.999_99), "00:00");
        assert_eq!(clock_time(-1.0), "23:00");
    }
}
