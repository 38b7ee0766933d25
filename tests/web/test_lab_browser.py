"""The lab in a real browser (the setup of test_web_browser.py: uvicorn on 127.0.0.1, Debian's
Chromium driven by Playwright): each exhibit's main interaction changes a setting and the
number shown becomes the one the page's JSON twin gives for that setting; no request leaves
the origin and no console error (a CSP violation would be one) appears. Saves lab-*.png
beside the other screenshots ($GLASSRAG_SCREENSHOTS, or a temporary folder)."""

from __future__ import annotations

import re
import urllib.request
from urllib.parse import urlencode

import pytest

from test_web_browser import SCREENSHOTS, browser, fetch_json, live, needs_chromium, page  # noqa: F401


def token(live: str) -> str:
    """The server's token, as the page's forms carry it: the JSON twins of other settings than
    the index's that evaluate a split are asked with it, as the form asks (issue 51.3)."""
    with urllib.request.urlopen(live + "/ask", timeout=30) as r:
        return re.search(r'name="token" value="([^"]+)"', r.read().decode())[1]


def shot(tab, name: str, height: int | None = None) -> None:
    """The page, whole or its first `height` pixels (a long table need not be in a README)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    clip = {"x": 0, "y": 0, "width": 1440, "height": height} if height else None
    tab.screenshot(path=str(SCREENSHOTS / f"lab-{name}.png"), full_page=True, clip=clip)
    assert (SCREENSHOTS / f"lab-{name}.png").stat().st_size > 10_000


@needs_chromium
def test_cuts_a_new_size_recomputes_the_count_and_the_intact_rate(page, live: str):
    page.goto(live + "/lab/cuts")
    with page.expect_navigation():
        page.select_option("#chunker", "fixed")  # the script submits a changed choice at once
    page.fill("#size", "100")
    page.fill("#overlap", "20")
    with page.expect_navigation():
        page.click("form.lab-form button[type=submit]")
    expected = fetch_json(live + "/lab/cuts.json?" + urlencode({"chunker": "fixed", "size": 100, "overlap": 20,
                                                                "token": token(live)}))
    assert page.inner_text("#n-chunks") == str(expected["measured"]["chunks"])
    assert page.inner_text("#n-predicted") == str(expected["measured"]["predicted_chunks"])
    assert page.inner_text("#intact") == f"{expected['measured']['intact']:.3f}"
    assert page.locator("svg.lab-line path.series").count() == 2
    assert page.locator(".doctext .cutmark.start").count() == len(expected["document"]["chunks"])
    shot(page, "cuts", 1900)


@needs_chromium
def test_bm25_a_heat_map_cell_a_slider_and_the_commit(page, live: str):
    page.goto(live + "/lab/bm25")
    cell = page.locator('svg.heat g.cell[data-k1="0.9"][data-b="0.4"]')
    with page.expect_navigation():
        cell.click()
    expected = fetch_json(live + "/lab/bm25.json?k1=0.9&b=0.4&token=" + token(live))
    assert page.inner_text("#train-recall") == f"{expected['train']:.3f}"
    assert page.locator("svg.heat g.cell.current").get_attribute("data-k1") == "0.9"
    with page.expect_navigation():
        page.fill("#b", "0.75")  # a slider: released, the form is submitted
    moved = fetch_json(live + "/lab/bm25.json?k1=0.9&b=0.75&token=" + token(live))
    assert page.inner_text("#train-recall") == f"{moved['train']:.3f}"
    assert "not yet" in page.inner_text("#test-recall")
    with page.expect_navigation():
        page.click("#commit")
    committed = fetch_json(live + "/lab/bm25.json?k1=0.9&b=0.75&commit=1&token=" + token(live))
    assert page.inner_text("#test-recall") == f"{committed['test']:.3f}"
    shot(page, "bm25")


@needs_chromium
def test_fusion_a_new_k_and_a_picked_square(page, live: str):
    page.goto(live + "/lab/fusion")
    with page.expect_navigation():
        page.select_option("#method", "rrf")
    page.fill("#k", "30")
    with page.expect_navigation():
        page.click("form.lab-form button[type=submit]")
    expected = fetch_json(live + "/lab/fusion.json?method=rrf&k=30&token=" + token(live))
    fused = next(r for r in expected["rows"] if r["stage"] == "fuse")
    shown = page.locator('tr[data-stage="fuse"] td[data-metric="recall@5"]').inner_text()
    assert shown == f"{fused['metrics']['recall@5']:.3f}"
    assert page.locator("a.square").count() == expected["questions"]
    assert page.locator("a.square .mark.m2.on").count() == expected["counts"]["fuse"]
    with page.expect_navigation():
        page.locator("a.square").nth(3).click()
    assert page.locator(".picked-lists .list").count() == 3
    assert page.locator("a.square.picked").count() == 1
    shot(page, "fusion")


@needs_chromium
def test_lsa_a_word_and_fewer_dimensions(page, live: str):
    page.goto(live + "/lab/lsa")
    page.fill("#word", "battery")
    with page.expect_navigation():
        page.click("form.lab-form button[type=submit]")
    expected = fetch_json(live + "/lab/lsa.json?word=battery")
    assert page.locator("ol.nearest code").first.inner_text() == expected["words"]["nearest"][0]["word"]
    with page.expect_navigation():
        page.fill("#dims", "8")  # the slider: released, the form is submitted
    fewer = fetch_json(live + "/lab/lsa.json?" + urlencode({"word": "battery", "dims": 8}))
    assert page.inner_text("#kept") == f"{fewer['variance']['kept_here']:.3f}"
    assert page.inner_text("#pair-cosine") == f"{fewer['pair']['cosine']:.3f}"
    assert page.locator("svg.lsa-map circle.pt").count() == len(fewer["points"])
    assert page.locator("svg.variance rect.bar.used").count() == 8
    shot(page, "lsa")


@needs_chromium
def test_rerank_a_new_penalty_and_the_mmr_slider(page, live: str):
    page.goto(live + "/lab/rerank")
    with page.expect_navigation():
        page.select_option("#l2", "10.0")
    assert "l2=10.0" in page.url
    expected = fetch_json(page.url.replace("/lab/rerank?", "/lab/rerank.json?"))  # the form sends its question too
    assert page.inner_text("#l2-shown") == "10.0"
    weight = expected["model"]["weights"][0]
    assert page.locator("table.weights tr[data-feature] td.num").first.inner_text() == f"{weight:.3f}"
    reranked = next(r for r in expected["table"] if r["split"] == "test" and r["order"] == "reranked")
    cell = page.locator('tr[data-split="test"][data-order="reranked"] td[data-metric="recall@5"]').inner_text()
    assert cell == f"{reranked['metrics']['recall@5']:.3f}"
    assert "in the top three" == page.inner_text("#outdated-state")
    out = expected["outdated"]["falls_out_at"]
    with page.expect_navigation():
        page.fill("#mmr", str(out))
    assert page.inner_text("#outdated-state") == "out of the top three"
    shot(page, "rerank")


@needs_chromium
def test_losses_a_run_and_a_paired_test(page, live: str):
    page.goto(live + "/lab/losses")
    first = fetch_json(live + "/lab/losses.json")
    assert page.inner_text("#accuracy") == f"{first['accuracy']['value']:.3f}"
    with page.expect_navigation():  # a run is recorded by the form's POST only (issue 28.3)
        page.click("form.lab-form button[type=submit]")
    page.fill("#budget", "400")
    with page.expect_navigation():
        page.click("form.lab-form button[type=submit]")
    second = fetch_json(live + "/lab/losses.json?budget=400&token=" + token(live))
    assert page.inner_text("#accuracy") == f"{second['accuracy']['value']:.3f}"
    assert page.inner_text("#bound") == f"{second['bound']['value']:.3f}"
    page.check(f'input[name=a][value="{first["run_id"]}"]')
    page.check(f'input[name=b][value="{second["run_id"]}"]')
    with page.expect_navigation():
        page.click("#compare")
    paired = fetch_json(live + "/lab/losses.json?" + urlencode({"budget": 400, "a": first["run_id"],
                                                               "b": second["run_id"], "token": token(live)}))
    assert page.inner_text("#paired").startswith(f"A {first['run_id']} against B {second['run_id']}")
    assert page.inner_text("#paired-p") == f"{paired['paired']['p']:.4g}"
    shot(page, "losses", 1500)


@needs_chromium
def test_the_lab_remembers_the_exhibits_explored_in_this_browser_only(page, live: str):
    page.goto(live + "/lab")
    assert page.locator("ol.exhibits .visited:visible").count() == 0
    page.goto(live + "/lab/bm25")
    page.goto(live + "/lab")
    assert page.locator('li[data-exhibit="bm25"] .visited').is_visible()
    assert page.locator('li[data-exhibit="cuts"] .visited').is_hidden()
    shot(page, "index")


@needs_chromium
def test_the_lab_works_with_javascript_off(browser, live: str):  # noqa: F811
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    # other settings than the index's: the link a form submission makes carries the page's token
    tab.goto(live + "/lab/bm25?k1=1.2&b=0.6&token=" + token(live))
    expected = fetch_json(live + "/lab/bm25.json?k1=1.2&b=0.6&token=" + token(live))
    assert tab.inner_text("#train-recall") == f"{expected['train']:.3f}"
    tab.click("#commit")  # a plain form submission
    tab.wait_for_url("**commit=1**")
    assert tab.inner_text("#test-recall") != "not yet"
    context.close()


pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestAssertRewriteWarning")
