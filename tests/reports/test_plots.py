"""The inline SVG plots: escaped, titled, drawn from their numbers, and shown in the HTML report
in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import pytest

from agenteval_otel import EvalReport
from agenteval_otel.reports import (
    Estimate,
    bar_chart_svg,
    bin_counts,
    distribution_svg,
    forest_plot_svg,
    histogram_svg,
    line_chart_svg,
    percentiles,
    write_html,
)
from tests.browser import chromium
from tests.reports.conftest import SCRIPT

SVG = "{http://www.w3.org/2000/svg}"


def _plots() -> list[str]:
    return [
        histogram_svg(*bin_counts([0.1, 0.2, 0.9], 5, 0.0, 1.0), title=SCRIPT, x_label=SCRIPT, marker=0.8),
        bar_chart_svg([(SCRIPT, 0.25)], title=SCRIPT, x_label=SCRIPT, notes=[SCRIPT]),
        distribution_svg([1.0, 2.0, 3.0], title=SCRIPT, x_label=SCRIPT, unit=SCRIPT),
        forest_plot_svg([Estimate(SCRIPT, 0.1, -0.1, 0.3)], title=SCRIPT, x_label=SCRIPT),
        line_chart_svg([(SCRIPT, [0.5, None])], [SCRIPT, SCRIPT], title=SCRIPT, y_label=SCRIPT),
    ]


@pytest.mark.parametrize("svg", _plots(), ids=["histogram", "bars", "distribution", "forest", "lines"])
def test_each_plot_is_well_formed_titled_and_escaped(svg: str) -> None:
    root = ElementTree.fromstring(svg)  # well-formed XML: no text became markup
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert root.find(f"{SVG}title").text == SCRIPT  # type: ignore[union-attr]
    assert list(root.iter(f"{SVG}script")) == []
    assert "<script>" not in svg


def test_line_chart_points_follow_the_values_and_gaps_break_the_line() -> None:
    root = ElementTree.fromstring(line_chart_svg([("pass rate", [1.0, 0.5, None, 0.0, 0.25])], list("abcde"),
                                                 title="t", y_label="y", minimum=0.0, maximum=1.0, percent=True))
    points = [(float(c.get("cx", 0)), float(c.get("cy", 0))) for c in root.iter(f"{SVG}circle")]
    assert len(points) == 4 and [x for x, _ in points] == sorted(x for x, _ in points)
    top, middle, bottom = points[0][1], points[1][1], points[2][1]
    assert middle - top == pytest.approx(bottom - middle)  # 1.0, 0.5, 0.0 evenly spaced
    assert len([e for e in root.iter(f"{SVG}line") if e.get("class") == "plot-line"]) == 2  # b–c–d broken by c
    assert [c.findtext(f"{SVG}title") for c in root.iter(f"{SVG}circle")][1] == "pass rate · b: 50%"
    with pytest.raises(ValueError, match="one value per x label"):
        line_chart_svg([("m", [1.0])], ["a", "b"], title="t", y_label="y")


def test_histogram_bars_follow_the_counts() -> None:
    counts, edges = bin_counts([0.05, 0.15, 0.15, 0.95, 1.0], 10, 0.0, 1.0)
    assert counts == [1, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    root = ElementTree.fromstring(histogram_svg(counts, edges, title="t", x_label="x"))
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "plot-bar"]
    heights = [float(r.get("height", 0)) for r in bars]
    assert len(bars) == 3 and heights[1] == heights[2] == 2 * heights[0]
    with pytest.raises(ValueError, match="edges must be one more than counts"):
        histogram_svg([1, 2], [0.0, 1.0], title="t", x_label="x")


def test_forest_plot_places_intervals_around_zero() -> None:
    root = ElementTree.fromstring(forest_plot_svg(
        [Estimate("worse", -0.2, -0.3, -0.1, "bad"), Estimate("same", 0.0, -0.1, 0.1)], title="deltas"))
    zero = float(next(e for e in root.iter(f"{SVG}line") if e.get("class") == "plot-zero").get("x1", 0))
    intervals = [(float(e.get("x1", 0)), float(e.get("x2", 0)), e.get("stroke"))
                 for e in root.iter(f"{SVG}line") if e.get("class") == "plot-ci"]
    (worse_low, worse_high, worse_colour), (same_low, same_high, same_colour) = intervals
    assert worse_low < worse_high < zero and same_low < zero < same_high and worse_colour != same_colour


def test_percentiles_interpolate() -> None:
    assert percentiles([10.0, 20.0], (0, 25, 100)) == {0: 10.0, 25: 12.5, 100: 20.0}
    assert percentiles([]) == {}


def test_the_report_shows_its_plots_in_chromium(report: EvalReport, tmp_path: Path) -> None:
    tags = {"hostile": [SCRIPT, "smoke"], report.results[0].eval_id: ["smoke"]}
    path = write_html(report, tmp_path / "report.html", tags=tags)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri(), wait_until="load")
        plots = page.locator("#plots-title ~ .plots svg.plot")
        titles = [plots.nth(i).locator("title").first.text_content() for i in range(plots.count())]
        assert titles == ["trajectory_match", "response_match", "Pass rate per tag",
                          "Agent time per case", "Tokens per case"]
        for i in range(plots.count()):
            box = plots.nth(i).bounding_box()
            assert box and box["width"] > 300 and box["height"] > 100
        tag_rows = page.locator("svg.bars g.plot-row title").all_text_contents()
        assert tag_rows == [f"{SCRIPT}: 0% · 0/1", "smoke: 0% · 0/2"]
        assert page.evaluate("() => window.__pwned") is None
        page.locator("#plots-title").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "plots.png"))
        assert (tmp_path / "plots.png").stat().st_size > 10_000
    assert errors == []
