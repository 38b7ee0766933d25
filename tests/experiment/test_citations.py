"""Every default that cites an experiment cites one the log has, and every entry that says it
chose a default is cited by that setting."""

from __future__ import annotations

import re
from pathlib import Path

from glassrag.config import SETTINGS
from glassrag.experiment import load_all

LOG = Path(__file__).resolve().parents[2] / "experiments"


def test_cited_experiments_exist_and_cite_back():
    entries = {e.name: e for e in load_all(LOG)}
    cited = {name: re.findall(r"experiments? ((?:bench-)?[a-z0-9-]+)(?: and ((?:bench-)?[a-z0-9-]+))?", s.source)
             for name, s in SETTINGS.items()}
    named = {name: {n for pair in found for n in pair if n} for name, found in cited.items()}
    unknown = {setting: sorted(n - set(entries)) for setting, n in named.items() if n - set(entries)}
    assert not unknown, f"config.py cites experiments the log does not have: {unknown}"
    for e in entries.values():
        for setting in e.cites:
            assert setting in SETTINGS, f"{e.name} cites an unknown setting {setting}"
            script = next((word for word in e.command.split() if word.endswith(".py")), "")
            source = SETTINGS[setting].source
            assert e.name in named[setting] or (script and Path(script).name in source), \
                f"{e.name} says it chose {setting}, whose source does not name it: {source!r}"
    assert sum(bool(n) for n in named.values()) >= 15
