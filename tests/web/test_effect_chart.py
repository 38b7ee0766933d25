"""The development page's effect chart leaves room below the plot for its longest name
(web/development.py `effect_chart`; the browser layout test measures the same in Chromium)."""

from glassrag.web.development import BOTTOM, CHART_H, LABEL_CHAR_PX, TOP, effect_chart


def experiment(name: str) -> dict:
    return {"name": name, "tone": "kept",
            "corpora": [{"corpus": "demo", "metrics": {"answer hit@5": {"measured": True, "diff": 0.1, "p": 0.5}}}]}


def test_short_names_keep_the_fixed_room_and_a_long_one_gets_more():
    short = effect_chart([experiment("rm3")], "answer hit@5", ["demo"])
    assert short["height"] == CHART_H and short["height"] - short["bottom"] == BOTTOM
    name = "gate-signal-bm25-top-on-margin"  # 30 characters: 8 + 165 + 8 px below the plot
    long = effect_chart([experiment("rm3"), experiment(name)], "answer hit@5", ["demo"])
    assert long["bottom"] == short["bottom"] == CHART_H - BOTTOM  # the plot itself does not move
    room = long["height"] - long["bottom"]
    assert room == 8 + int(LABEL_CHAR_PX * len(name)) + 8 > BOTTOM
    assert long["height"] == TOP + (CHART_H - TOP - BOTTOM) + room
