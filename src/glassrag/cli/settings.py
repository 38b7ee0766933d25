"""`glassrag config`: every setting, its value and where the value came from."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.common import Table, out
from glassrag.config import SETTINGS, Config, layered, toml_text


def add_parser(sub: Any) -> None:
    p = sub.add_parser("config", help="list every setting: its value, where it came from, what it takes, "
                                      "whether it needs a re-ingest, its doc and the source of its default")
    p.add_argument("--config", type=Path, help="a TOML settings file, shown layered over the defaults "
                                               "(or over the index's settings, with --index)")
    p.add_argument("--index", "--store", dest="index", help="show the settings of this index (a folder or a "
                                                            "postgresql:// URL)")
    p.set_defaults(run=cmd_config)


def cmd_config(args: argparse.Namespace) -> int:
    """Every setting: its value, where the value came from (default < index < file), what
    it takes, whether changing it needs a re-ingest, its doc and the source of its default."""
    base = Config()
    if args.index:
        from glassrag.store import open_store

        base = open_store(args.index).read().config
    config = layered(base, args.config, built=args.index is not None)
    table = Table(title="settings (from: default < index < file < flag)", show_lines=False)
    # a setting's name is what a user types: whole on one line whatever the terminal's width
    table.add_column("setting", no_wrap=True, min_width=max(len(n) for n in SETTINGS))
    for col in ("value", "from", "allowed", "re-ingest", "what it does", "why this default"):
        table.add_column(col, overflow="fold")
    for name, s in SETTINGS.items():
        layer, origin = config.origin(name)
        table.add_row(name, toml_text(config.value(name)), f"{layer} ({origin})" if layer in ("file", "flag") else layer,
                      s.allowed(), "yes" if s.reingest else "", s.doc, s.source)
    out.print(table)
    return 0
