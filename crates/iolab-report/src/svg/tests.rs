use super::frame::{cut_middle, nice_ticks, Plot};
use super::heatmap::heat_colour;
use super::*;

fn line(series: Vec<Series>) -> LineChart {
    LineChart {
        title: "QD <scaling> & \"more\"".into(),
        subtitle: String::new(),
        x_label: "queue depth".into(),
        y_label: "MB/s".into(),
        x_scale: XScale::Log2,
        x_labels: XLabels::Number,
        series,
        ceilings: vec![],
    }
}

#[test]
fn long_legend_labels_keep_both_ends() {
    assert_eq!(cut_middle("short", 10), "short");
    let cut = cut_middle("Read — /home/someone/benchmarks/run-a.bin @ host", 20);
    assert!(cut.chars().count() <= 20, "{cut}");
    assert!(
        cut.starts_with("Read") && cut.ends_with("a.bin @ host"),
        "{cut}"
    );
}

#[test]
fn text_is_escaped() {
    let svg = line_chart(&line(vec![Series {
        label: "<script>alert('x')</script>".into(),
        points: vec![(1.0, 10.0), (2.0, 20.0)],
    }]));
    assert!(!svg.contains("<script>"));
    assert!(svg.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert!(svg.contains("QD &lt;scaling&gt; &amp; &quot;more&quot;"));
}

#[test]
fn one_polyline_per_series_and_deterministic() {
    let s = |l: &str, k: f64| Series {
        label: l.into(),
        points: [1.0, 2.0, 4.0, 8.0].iter().map(|&q| (q, q * k)).collect(),
    };
    let ch = line(vec![s("a", 10.0), s("b", 7.5), s("c", 1.0)]);
    let a = line_chart(&ch);
    assert_eq!(a.matches("<polyline").count(), 3);
    assert_eq!(a, line_chart(&ch));
    assert!(a.starts_with("<svg") && a.ends_with("</svg>"));
    assert!(!a.contains("NaN") && !a.contains("inf"));
}

#[test]
fn log2_axis_spaces_powers_of_two_evenly() {
    let plot = Plot {
        x_scale: XScale::Log2,
        x_min: 1.0,
        x_max: 32.0,
        y_min: 0.0,
        y_max: 1.0,
    };
    let d1 = plot.px(2.0) - plot.px(1.0);
    let d2 = plot.px(32.0) - plot.px(16.0);
    assert!((d1 - d2).abs() < 1e-9);
    assert!(plot.px(1.0) < plot.px(32.0));
}

#[test]
fn nice_ticks_cover_the_range_in_round_steps() {
    assert_eq!(
        nice_ticks(0.0, 97.0, 5),
        vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    );
    let t = nice_ticks(0.0, 0.37, 5);
    assert!(*t.last().unwrap() >= 0.37 && t.len() <= 7);
}

#[test]
fn far_ceiling_is_named_not_drawn_and_near_one_is_drawn() {
    let mut ch = line(vec![Series {
        label: "a".into(),
        points: vec![(1.0, 100.0), (2.0, 200.0)],
    }]);
    ch.ceilings = vec![Ceiling {
        label: "ceiling".into(),
        value: 250.0,
    }];
    assert_eq!(line_chart(&ch).matches(r#"class="ceiling""#).count(), 1);
    ch.ceilings[0].value = 4000.0;
    let svg = line_chart(&ch);
    assert_eq!(svg.matches(r#"class="ceiling""#).count(), 0);
    assert!(svg.contains("ceiling 4000 (off the scale)"));
}

#[test]
fn scatter_window_keeps_only_the_last_seconds() {
    let s = Series {
        label: "x".into(),
        points: (1..=100).map(|t| (t as f64, 1000.0)).collect(),
    };
    let mut ch = ScatterChart {
        title: "t".into(),
        subtitle: String::new(),
        x_label: "s".into(),
        y_label: "IOPS".into(),
        series: vec![s],
        last_seconds: None,
    };
    assert_eq!(scatter_chart(&ch).matches(r#"class="dot""#).count(), 100);
    ch.last_seconds = Some(40.0);
    assert_eq!(scatter_chart(&ch).matches(r#"class="dot""#).count(), 40);
}

#[test]
fn bars_skip_missing_values() {
    let ch = BarChart {
        title: "t".into(),
        subtitle: String::new(),
        value_label: "MB/s".into(),
        categories: vec!["4K".into(), "8K".into()],
        series: vec![
            BarSeries {
                label: "read".into(),
                values: vec![Some(1.0), None],
            },
            BarSeries {
                label: "write".into(),
                values: vec![Some(2.0), Some(3.0)],
            },
        ],
        ceilings: vec![],
    };
    assert_eq!(bar_chart(&ch).matches(r#"class="bar""#).count(), 3);
}

#[test]
fn heatmap_draws_a_cell_per_value() {
    let ch = Heatmap {
        title: "t".into(),
        subtitle: String::new(),
        row_label: "read %".into(),
        col_label: "QD".into(),
        rows: vec!["100".into(), "0".into()],
        cols: vec!["1".into(), "2".into(), "4".into()],
        values: vec![
            vec![Some(1.0), Some(2.0), Some(3.0)],
            vec![Some(4.0), None, Some(6.0)],
        ],
        unit: "IOPS".into(),
    };
    assert_eq!(heatmap(&ch).matches(r#"class="cell""#).count(), 5);
    assert_eq!(heat_colour(0.0), "#ebf3fb");
    assert_eq!(heat_colour(1.0), "#08306b");
}

#[test]
fn convergence_draws_window_band_and_slope() {
    let ch = Convergence {
        title: "t".into(),
        subtitle: "attained".into(),
        y_label: "IOPS".into(),
        rounds: vec![5000.0, 4000.0, 3100.0, 3000.0, 3050.0, 2950.0, 3000.0],
        window: 5,
        window_mean: 3020.0,
        slope: -20.0,
        intercept: 3060.0,
    };
    let svg = convergence_chart(&ch);
    assert_eq!(svg.matches(r#"class="window""#).count(), 1);
    assert_eq!(svg.matches(r#"class="slope""#).count(), 1);
    assert_eq!(svg.matches("<title>round").count(), 7);
}

#[test]
fn values_and_sizes_format_stably() {
    assert_eq!(fmt_value(1234.56), "1235");
    assert_eq!(fmt_value(12.345), "12.3");
    assert_eq!(fmt_value(-0.0001), "0.000");
    assert_eq!(fmt_bytes(512.0), "512");
    assert_eq!(fmt_bytes(4096.0), "4K");
    assert_eq!(fmt_bytes(64.0 * 1048576.0), "64M");
    assert_eq!(fmt_tick(250_000.0), "250k");
    assert_eq!(c(-0.04), "0");
    assert_eq!(c(12.25), "12.3");
}
