"""Where exhibit 3 writes the labels of the two texts folded in (web/lab_plots.label_places):
E-4107 and E-4170 fold in at almost the same place and their labels were drawn over each other
(issue 49, item 7)."""

from glassrag.web.lab_plots import CHAR_W, LABEL_H, MAP_W, label_places


def mark(label: str, cx: float, cy: float) -> dict:
    return {"label": label, "cx": cx, "cy": cy, "class": "pair"}


def test_labels_far_apart_stay_beside_their_rings():
    a, b = label_places([mark("E-4107", 100, 100), mark("E-4170", 300, 300)])
    assert (a["lx"], a["ly"], a["anchor"]) == (110, 104, "start")
    assert (b["lx"], b["ly"], b["anchor"]) == (310, 304, "start")


def test_labels_that_would_cross_go_above_and_below():
    a, b = label_places([mark("E-4170", 100, 103), mark("E-4107", 101, 100)])
    # E-4107 is the higher ring: its label above it, E-4170's below its own, a line apart at least
    assert b["ly"] == min(100 - 9, 103 - 9 - LABEL_H) and a["ly"] == 103 + 4 + LABEL_H
    assert a["ly"] - b["ly"] >= LABEL_H


def test_a_label_that_would_leave_the_map_goes_left_of_its_ring():
    right, = label_places([mark("E-4107", MAP_W - 20, 50)])
    assert (right["lx"], right["anchor"]) == (MAP_W - 30, "end")
    assert MAP_W - 20 + 10 + CHAR_W * 6 > MAP_W  # it would have, on the right
