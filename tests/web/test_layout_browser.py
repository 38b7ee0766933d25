"""The layout in a real browser at 1400 and 1920 px (issue 27, item 7), and at 1000 px too for
the checks of issue 49, item 7 (no word or number cut across two lines, the route at a readable
size, exhibit 3, the development page): nothing overlaps, nothing is cut off, nothing makes the
page scroll sideways. Debian's Chromium driven by
Playwright against the live app of test_web_browser.py; every assertion reads the boxes the
browser laid out (getBoundingClientRect, scrollWidth against clientWidth)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator
from urllib.parse import urlencode

import pytest

from tests.web.test_web_browser import CHROMIUM, E4107, browser, live, needs_chromium, served  # noqa: F401 (fixtures)

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"

WIDTHS = (1400, 1920)
SLACK = 1  # px: sub-pixel rounding

# the box of every element matching a selector, as plain numbers
BOXES = """sel => [...document.querySelectorAll(sel)].map(e => {
  const r = e.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height,
          text: (e.textContent || '').trim().slice(0, 60), scrollWidth: e.scrollWidth, clientWidth: e.clientWidth};
})"""


def tab_of_width(browser, width: int) -> Iterator[object]:
    """A new browser tab `width` pixels wide (its `width` kept on it), closed after the test."""
    context = browser.new_context(viewport={"width": width, "height": 1000})
    tab = context.new_page()
    tab.width = width
    yield tab
    context.close()


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def wide(request, browser, live: str) -> Iterator[object]:  # noqa: F811
    yield from tab_of_width(browser, request.param)


def boxes(page, selector: str) -> list[dict]:
    found = page.evaluate(BOXES, selector)
    assert found, f"nothing matches {selector}"
    return found


def overlap(a: dict, b: dict) -> bool:
    return (a["left"] < b["right"] - SLACK and b["left"] < a["right"] - SLACK
            and a["top"] < b["bottom"] - SLACK and b["top"] < a["bottom"] - SLACK)


def no_sideways_scroll(page) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways: {width[0]} > {width[1]} px"


@needs_chromium
def test_the_gate_signal_table_and_the_reranker_panel_do_not_overlap(wide, live: str):  # noqa: F811
    wide.goto(live + "/analytics")
    table, = boxes(wide, "#gate-signals")
    panel, = boxes(wide, "#reranker")
    gate, = boxes(wide, "section#gate")
    assert not overlap(table, panel), (table, panel)
    assert table["right"] <= gate["right"] + SLACK, "the signal table runs out of its section"
    wrapper, = boxes(wide, "#gate .scroll-x")
    assert wrapper["scrollWidth"] <= wrapper["clientWidth"], "the signal table needs a scroll bar"
    # every cell of the weights panel stays inside it, and the panel says what auto does with it
    for cell in boxes(wide, "#reranker td, #reranker th"):
        assert cell["right"] <= panel["right"] + SLACK
    assert "rerank.method = auto" in boxes(wide, "#reranker-auto")[0]["text"]
    no_sideways_scroll(wide)


@needs_chromium
@pytest.mark.parametrize("settings", [{}, {"rerank.method": "learned", "mmr.relevance": "0.7", "cap.per_document": "2"}],
                         ids=["defaults", "eight-stages"])
def test_the_route_s_answer_column_is_on_the_page(wide, live: str, settings: dict):  # noqa: F811
    wide.goto(live + "/ask?" + urlencode({"q": E4107, **settings}))
    wide.wait_for_selector("svg.route")
    route, = boxes(wide, "svg.route")
    section, = boxes(wide, "section.route-section")
    names = boxes(wide, "svg.route .colname")
    answer = [n for n in names if n["text"] == "answer"]
    assert answer, [n["text"] for n in names]
    assert len(names) >= (8 if settings else 6)
    assert route["right"] <= section["right"] + SLACK and answer[0]["right"] <= wide.width
    stages, = boxes(wide, "table.stages")
    assert stages["right"] <= section["right"] + SLACK and stages["scrollWidth"] <= stages["clientWidth"] + SLACK
    no_sideways_scroll(wide)


@needs_chromium
def test_the_lab_s_reranker_table_stays_in_its_column(wide, live: str):  # noqa: F811
    wide.goto(live + "/lab/rerank")
    wide.wait_for_selector("table.rerank-table")
    table, = boxes(wide, "table.rerank-table")
    column = wide.evaluate("""() => { const r = document.querySelector('table.rerank-table').parentElement
                                          .getBoundingClientRect(); return {left: r.left, right: r.right}; }""")
    assert table["right"] <= column["right"] + SLACK, (table, column)
    for cell in boxes(wide, "table.rerank-table td, table.rerank-table th"):
        assert cell["right"] <= column["right"] + SLACK, cell
    weights, = boxes(wide, "table.weights")
    assert not overlap(weights, table)
    no_sideways_scroll(wide)


@pytest.fixture(scope="module")
def live_log(demo_index: Path) -> Iterator[str]:
    """The app with the repository's experiment log (its development page draws the chart)."""
    from glassrag.web.server import create_app

    yield from served(create_app([demo_index], log=EXPERIMENTS))


@needs_chromium
def test_the_development_chart_s_labels_do_not_overlap(wide, live_log: str):
    wide.goto(live_log + "/development")
    labels = sorted(boxes(wide, "svg.effects text.xlabel"), key=lambda b: b["left"])
    chart, = boxes(wide, "svg.effects")
    assert len(labels) >= 10
    for a, b in zip(labels, labels[1:]):
        assert not overlap(a, b), (a["text"], b["text"])
    for label in labels:
        assert chart["top"] <= label["top"] and label["bottom"] <= chart["bottom"] + SLACK, label["text"]
    no_sideways_scroll(wide)


@needs_chromium
def test_the_ask_page_opens_with_the_question_and_keeps_the_settings_folded(wide, live: str):  # noqa: F811
    wide.goto(live + "/ask")
    first = wide.evaluate("document.querySelector('main input:not([type=hidden]), main select, main textarea').id")
    assert first == "q", "the question box is not the page's first control"
    question, = boxes(wide, "#q")
    tries = boxes(wide, "ul.tries a")
    assert len(tries) >= 3 and question["bottom"] <= tries[0]["top"]
    panel = "details.settings-disclosure aside.settings"
    assert not wide.is_visible(panel), "the settings panel is open before a question"
    summary, = boxes(wide, "details.settings-disclosure > summary")
    assert "controls" in summary["text"] and summary["top"] >= tries[-1]["bottom"]
    wide.click("details.settings-disclosure > summary")
    assert wide.is_visible(panel) and boxes(wide, panel)[0]["height"] > 200
    # a question to try opens its answer
    wide.click("ul.tries a >> nth=0")
    wide.wait_for_selector("article.best, div.declined")
    no_sideways_scroll(wide)


@needs_chromium
def test_the_front_page_s_tables_stay_in_their_columns(wide, live: str):  # noqa: F811
    """/ (the corpora served): the figures, the stages and the questions to try are laid out
    side by side without overlap, and a question to try opens its answer."""
    wide.goto(live + "/")
    section, = boxes(wide, "section.corpus")
    figures, = boxes(wide, "table.headline")
    stages, = boxes(wide, "table.stages-now")
    questions, = boxes(wide, "ul.examples")
    assert figures["right"] <= section["right"] + SLACK and figures["bottom"] <= stages["top"]
    assert not overlap(stages, questions), (stages, questions)
    for cell in boxes(wide, "table.stages-now td, table.stages-now th"):
        assert cell["right"] <= questions["left"] + SLACK, cell["text"]
    assert questions["right"] <= section["right"] + SLACK
    assert stages["scrollWidth"] <= stages["clientWidth"] + SLACK
    picker = boxes(wide, "header .indexes")
    assert picker and "demo" in picker[0]["text"]
    no_sideways_scroll(wide)
    wide.click("ul.examples a >> nth=0")
    wide.wait_for_selector("article.best, div.declined")
    assert "/ask?" in wide.url


# issue 49, item 7: no word or number cut across two lines, nothing over anything, at 1000 px too ------

EVERY_WIDTH = (1000, 1400, 1920)

# every run of letters and digits in `main` whose text the browser laid out on more than one line:
# "analyz|e", "43|9" (a break at a hyphen, a slash or a space between two runs is no cut)
CUT_WORDS = """() => { const cut = [];
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, re = /[A-Za-z0-9]+/g; let m;
    while ((m = re.exec(node.textContent))) {
      const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
      if (lines.size > 1) cut.push(m[0] + ' in ' + node.parentElement.tagName.toLowerCase() + '.' +
                                   node.parentElement.className);
    } }
  return cut; }"""


@pytest.fixture(params=EVERY_WIDTH, ids=lambda w: f"{w}px")
def any_width(request, browser, live: str) -> Iterator[object]:  # noqa: F811
    yield from tab_of_width(browser, request.param)


@needs_chromium
@pytest.mark.parametrize("page", ["/ask?" + urlencode({"q": E4107}), "/", "/glossary", "/lab", "/lab/lsa",
                                  "/lab/rerank"])
def test_no_word_or_number_is_cut_across_two_lines(any_width, live: str, page: str):  # noqa: F811
    any_width.goto(live + page)
    any_width.wait_for_load_state("networkidle")
    assert any_width.evaluate(CUT_WORDS) == []
    no_sideways_scroll(any_width)


@needs_chromium
def test_the_route_is_drawn_at_a_readable_size(any_width, live: str):  # noqa: F811
    """At 1000 px the route was shrunk to fit, its 10.5 px labels drawn at 8 px: below 1240 px it
    keeps its size and scrolls inside its own box, the page does not."""
    any_width.goto(live + "/ask?" + urlencode({"q": E4107}))
    any_width.wait_for_selector("svg.route")
    route, = boxes(any_width, "svg.route")
    drawn = any_width.evaluate("document.querySelector('svg.route').viewBox.baseVal.width")
    assert route["width"] / drawn >= 0.85, f"the route is drawn at {route['width'] / drawn:.0%} of its size"
    box, = boxes(any_width, "section.route-section div.scroll")
    section, = boxes(any_width, "section.route-section")
    assert box["right"] <= section["right"] + SLACK
    no_sideways_scroll(any_width)


@needs_chromium
def test_exhibit_3_keeps_its_labels_and_charts_apart_and_its_inputs_wide(any_width, live: str):  # noqa: F811
    any_width.goto(live + "/lab/lsa")
    any_width.wait_for_selector("svg.lsa-map")
    a, b = boxes(any_width, "svg.lsa-map g.pair text")
    assert {a["text"], b["text"]} == {"E-4107", "E-4170"} and not overlap(a, b), (a, b)
    chart, = boxes(any_width, "svg.variance")
    words, = boxes(any_width, "ol.nearest")
    assert not overlap(chart, words), (chart, words)
    for field in ("#word", "#a", "#b"):  # room for a phrase, not six characters
        assert boxes(any_width, field)[0]["width"] >= 180, field


@needs_chromium
def test_the_outdated_question_select_shows_its_question(any_width, live: str):  # noqa: F811
    any_width.goto(live + "/lab/rerank")
    any_width.wait_for_selector("select#q")
    shown = any_width.evaluate("""() => { const s = document.querySelector('select#q');
        const c = document.createElement('canvas').getContext('2d'); c.font = getComputedStyle(s).font;
        return [c.measureText(s.options[s.selectedIndex].text).width, s.clientWidth]; }""")
    assert shown[0] <= shown[1], f"the chosen question needs {shown[0]:.0f} px of a {shown[1]} px select"
    no_sideways_scroll(any_width)


@needs_chromium
def test_the_development_page_is_grouped_by_verdict(any_width, live_log: str):
    """Issue 49, item 7: 37,110 px of experiments one after another; now one line each under its
    verdict, opened on demand (a link to one opens it)."""
    any_width.goto(live_log + "/development")
    groups = boxes(any_width, "h3.verdict-group")
    experiments = boxes(any_width, "details.experiment")
    assert len(groups) >= 2 and len(experiments) >= 10
    height = any_width.evaluate("document.documentElement.scrollHeight")
    assert height < 12_000, f"{height} px tall"
    name = any_width.evaluate("document.querySelector('details.experiment').id")
    any_width.goto(live_log + f"/development#{name}")
    assert any_width.evaluate(f"document.getElementById('{name}').open")
    no_sideways_scroll(any_width)
