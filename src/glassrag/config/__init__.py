"""Pipeline settings, each defined once: its default, type, allowed range or choices, whether
changing it needs a re-ingest, a one-line doc, and the source of its default (an entry of the
experiment log, `experiment NAME` for experiments/NAME.toml, shown in the generated
docs/measurements.md; a benchmark; or the literature).

Every way in checks against that one definition: TOML files (`read_settings`), command-line
flags (`argtype`) and the web form (`glassrag.web.settings`). Settings come in layers, each
overriding only what it names:

    built-in defaults < the index's stored settings < a --config file < command-line flags

A TOML file names settings by section:

    [bm25]
    k1 = 1.2

An index stores the settings that were set explicitly when it was built, plus every
setting that needs a re-ingest (they describe how it was built); a setting left at its
default follows the default of the glassrag that reads it. `glassrag config` prints every
setting with its value, where the value came from, its range and its doc.

sections.py holds the settings, section by section; setting.py what one definition is and how
a value is checked against it; layers.py `Config`, the definitions read from it (SETTINGS) and
the layering. This package hands their names on.
"""

from glassrag.config.layers import (LAYERS, SCORING, SECTIONS, SETTINGS, Config, layered, load_config,
                                    parse_sections, read_settings)
from glassrag.config.sections import (AnalyzeSettings, AnswerSettings, BM25Settings, CapSettings, ChunkSettings,
                                      FilterSettings, FuseSettings, GateSettings, GenerateSettings, LSASettings, MMRSettings,
                                      NeuralSettings, PostgresSettings, RerankSettings, RetrieveSettings,
                                      VersionSettings, WindowSettings)
from glassrag.config.setting import Setting, setting, toml_text

__all__ = ["LAYERS", "SCORING", "SECTIONS", "SETTINGS", "AnalyzeSettings", "AnswerSettings", "BM25Settings",
           "CapSettings", "ChunkSettings", "Config", "FilterSettings", "FuseSettings", "GateSettings", "GenerateSettings",
           "LSASettings", "MMRSettings", "NeuralSettings", "PostgresSettings", "RerankSettings",
           "RetrieveSettings", "Setting", "VersionSettings", "WindowSettings", "layered", "load_config", "parse_sections",
           "read_settings", "setting", "toml_text"]
