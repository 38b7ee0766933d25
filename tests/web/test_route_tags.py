"""Route labels fit their column's clip and keep what tells documents apart (issue 27:
`returns-policy-2023` and `-2025` both read `returns…y-20`)."""

from glassrag.web.route import TAG_CHARS, short_tag


def test_versions_stay_apart_and_tags_fit():
    a, b = short_tag("returns-policy-2023", "§ 6.2 Refunds"), short_tag("returns-policy-2025", "§ 6.2 Refunds")
    assert a != b and a.endswith("2023") and b.endswith("2025")
    assert len(a) <= TAG_CHARS and a.startswith("§6.2 ")
    assert short_tag("manual-tx200", "§ 3 Errors") == "§3 manual-tx200"
    assert short_tag("faq", "§ Returns") == "faq"
    assert short_tag("notes", "lines 4-9") == "l.4 notes"
    long = short_tag("travel-and-expenses-policy-2024", "§ 12.10.3 Per diem")
    assert long.endswith("y-2024") and "…" in long
