//! The HTML report in a real browser: headless Chromium (Debian's `chromium`, which `.ci/run`
//! installs) opens a report of every chart kind, and the test checks that the page logs no
//! console message, that every chart is in the DOM, and that the screenshot shows the charts
//! (not blank, the series colours present). Without Chromium it prints
//! "skipped: chromium not installed" and passes.

mod common;

use common::{quick_result, run_result, suite_result};
use iolab_report::html::render_html;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser may not take longer than this for one page; it is killed then.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| [d.join("chromium"), d.join("chromium-browser")])
        .find(|p| p.is_file())
}

/// What one browser run left: its exit status, its standard error, and its standard output.
struct BrowserRun {
    ok: bool,
    stderr: String,
    stdout: String,
}

/// Runs headless Chromium on `page` with `extra` flags; kills it after [`BROWSER_TIMEOUT`].
fn run_browser(browser: &Path, dir: &Path, page: &Path, extra: &[String]) -> BrowserRun {
    let profile = dir.join(format!("profile-{}", extra.len()));
    let (out_path, err_path) = (dir.join("browser.out"), dir.join("browser.err"));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        // Files, not pipes: a chatty browser can never block on a full pipe.
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("starting chromium");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(
        status.is_some(),
        "chromium did not finish within {BROWSER_TIMEOUT:?}; its log:\n{stderr}"
    );
    BrowserRun {
        ok: status.is_some_and(|s| s.success()),
        stderr,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
    }
}

/// Chromium writes the page's console messages to its log as `INFO:CONSOLE(line)] "text",
/// source: …` (also uncaught exceptions, as "Uncaught …").
fn console_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

#[test]
fn console_detection_sees_a_script_error() {
    // The check below is only worth something if it can fail: a page with a script error
    // must show up in the log the way the report test reads it.
    let Some(browser) = chromium() else {
        println!("skipped: chromium not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>x</p><script>console.error('canary'); not_defined();</script></body></html>",
    )
    .unwrap();
    let run = run_browser(&browser, dir.path(), &page, &["--dump-dom".to_string()]);
    let lines = console_lines(&run.stderr);
    assert!(
        lines.iter().any(|l| l.contains("canary")) && lines.iter().any(|l| l.contains("Uncaught")),
        "console messages not found in chromium's log:\n{}",
        run.stderr
    );
}

#[test]
fn report_renders_in_headless_chromium() {
    let Some(browser) = chromium() else {
        println!("skipped: chromium not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let html = render_html(&[
        suite_result("/dev/sdx", "bench-host", 1.0),
        suite_result("sim:ssd750@z97", "model-host", 1.6),
        quick_result("/dev/sdx", "bench-host", 1.0),
        run_result(),
    ]);
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let charts = html.matches("<svg").count();
    assert!(charts >= 20, "fixture has {charts} charts");

    // The DOM as the browser parsed it: every chart is there, as SVG.
    let dom = run_browser(&browser, dir.path(), &page, &["--dump-dom".to_string()]);
    assert!(dom.ok, "chromium --dump-dom failed:\n{}", dom.stderr);
    assert_eq!(
        dom.stdout.matches("<svg").count(),
        charts,
        "charts in the DOM"
    );
    assert_eq!(dom.stdout.matches("</svg>").count(), charts);
    assert!(
        console_lines(&dom.stderr).is_empty(),
        "console: {:?}",
        console_lines(&dom.stderr)
    );

    // The screenshot.
    let shot = dir.path().join("shot.png");
    let run = run_browser(
        &browser,
        dir.path(),
        &page,
        &[format!("--screenshot={}", shot.display())],
    );
    assert!(run.ok, "chromium --screenshot failed:\n{}", run.stderr);
    let console = console_lines(&run.stderr);
    assert!(console.is_empty(), "console messages: {console:?}");
    let pixels = decode_rgb(&shot);
    let total = pixels.len() as f64;
    assert!(
        total >= 1200.0 * 3000.0 * 0.99,
        "screenshot is {total} pixels"
    );
    let first = pixels[0];
    assert!(
        pixels.iter().any(|p| *p != first),
        "the screenshot is one colour"
    );
    let non_white = pixels.iter().filter(|p| p.iter().any(|&c| c < 235)).count() as f64;
    let share = non_white / total;
    println!(
        "screenshot: {:.1} % of {total} pixels not white",
        share * 100.0
    );
    // Text, tables, axes and lines cover a few percent of a page like this; a page that failed
    // to render (blank or an error page) has almost nothing.
    assert!(
        share > 0.02,
        "only {:.2} % of the screenshot is not white",
        share * 100.0
    );
    // The series colours of the charts are painted: the first two palette colours.
    for hex in &iolab_report::svg::PALETTE[..2] {
        let want = rgb(hex);
        let n = pixels.iter().filter(|p| close(**p, want)).count();
        assert!(n > 200, "colour {hex}: only {n} pixels");
    }
    if let Ok(keep) = std::env::var("IOLAB_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 10)
}

/// The screenshot's pixels as RGB.
fn decode_rgb(path: &Path) -> Vec<[u8; 3]> {
    let decoder = png::Decoder::new(std::fs::File::open(path).expect("screenshot written"));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit screenshot");
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    buf[..info.buffer_size()]
        .chunks_exact(step)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}
