"""`Config`: every section's settings together, each value with the layer it came from

    built-in defaults < the index's stored settings < a --config file < command-line flags

and the definitions read from the sections (SETTINGS; SCORING, the settings a gate calibration
is valid for), the TOML reader and the layering of a file and flags over a base."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from glassrag.config.sections import (AnalyzeSettings, AnswerSettings, BM25Settings, CapSettings, ChunkSettings,
                                      FilterSettings, WindowSettings,
                                      FuseSettings, GateSettings, GenerateSettings, LSASettings, MMRSettings,
                                      NeuralSettings, PostgresSettings, RerankSettings, RetrieveSettings,
                                      VersionSettings)
from glassrag.config.setting import Setting, toml_text
from glassrag.errors import ConfigError

LAYERS = ("default", "index", "file", "flag")


@dataclass(frozen=True)
class Config:
    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    analyze: AnalyzeSettings = field(default_factory=AnalyzeSettings)
    lsa: LSASettings = field(default_factory=LSASettings)
    neural: NeuralSettings = field(default_factory=NeuralSettings)
    bm25: BM25Settings = field(default_factory=BM25Settings)
    retrieve: RetrieveSettings = field(default_factory=RetrieveSettings)
    fuse: FuseSettings = field(default_factory=FuseSettings)
    versions: VersionSettings = field(default_factory=VersionSettings)
    filter: FilterSettings = field(default_factory=FilterSettings)
    window: WindowSettings = field(default_factory=WindowSettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    mmr: MMRSettings = field(default_factory=MMRSettings)
    cap: CapSettings = field(default_factory=CapSettings)
    gate: GateSettings = field(default_factory=GateSettings)
    answer: AnswerSettings = field(default_factory=AnswerSettings)
    generate: GenerateSettings = field(default_factory=GenerateSettings)
    postgres: PostgresSettings = field(default_factory=PostgresSettings)
    # where each value that is not the default came from: "section.name" → (layer, origin),
    # e.g. ("file", "my.toml"); not part of the settings (equality and to_dict ignore it)
    origins: Mapping[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {s: {g.name: getattr(getattr(self, s), g.name) for g in fields(getattr(self, s))}
                for s in SECTIONS}

    def key(self) -> str:
        """The settings as one text: equal for equal settings, whatever their order or origin
        (what a pipeline kept per configuration is looked up by)."""
        return json.dumps(self.to_dict(), sort_keys=True, default=str)

    @classmethod
    def from_dict(cls, data: Any, origin: str = "settings", layer: str = "file") -> "Config":
        """Defaults overridden by `data` ({section: {name: value}}), checked."""
        return cls().updated(data, origin, layer)

    def updated(self, data: Any, origin: str, layer: str) -> "Config":
        """A copy with the settings named in `data` checked and set, recorded as coming from
        `layer` ("index", "file", "flag") and `origin` (a file name, a flag)."""
        values = parse_sections(data, origin)
        config, origins = self, dict(self.origins)
        for section, changes in values.items():
            config = replace(config, **{section: replace(getattr(config, section), **changes)})
            origins.update({f"{section}.{key}": (layer, origin) for key in changes})
        return replace(config, origins=origins)

    def with_overrides(self, **sections: dict[str, Any]) -> "Config":
        """A copy with some settings changed: with_overrides(bm25={"k1": 1.2}); None leaves a
        setting as it is."""
        data = {name: {k: v for k, v in values.items() if v is not None} for name, values in sections.items()}
        return self.updated(data, "code", "flag")

    def value(self, name: str) -> Any:
        section, key = name.split(".", 1)
        return getattr(getattr(self, section), key)

    def origin(self, name: str) -> tuple[str, str]:
        """(layer, origin) of a setting's value; ("default", "") when nothing set it."""
        return self.origins.get(name, ("default", ""))

    def stored(self) -> dict[str, dict[str, Any]]:
        """What an index keeps: every setting set explicitly, and every setting that needs a
        re-ingest (it describes how the index was built). The others follow the defaults of
        the glassrag that reads the index."""
        out: dict[str, dict[str, Any]] = {}
        for name, s in SETTINGS.items():
            if s.user_only:
                continue  # an index never carries what glassrag would contact: the user names it each time
            if s.reingest or name in self.origins:
                out.setdefault(s.section, {})[s.key] = self.value(name)
        return out

    def check_user_only(self) -> None:
        """ConfigError when a setting that names what glassrag contacts (a URL) was read from an
        index folder rather than given by the user: an index is data and cannot make glassrag send
        the question anywhere. The message names the setting, where it came from, and the flag."""
        for name, s in SETTINGS.items():
            layer, origin = self.origin(name)
            if s.user_only and layer == "index" and self.value(name) != s.default:
                raise ConfigError(
                    f"{name} = {toml_text(self.value(name))} comes from the index ({origin}); glassrag "
                    "contacts only what you name yourself, never what an index folder names",
                    f"give it yourself (ask/eval --generator URL, or [{s.section}] {s.key} in your own "
                    "--config file), or leave generation off")

    def describe(self) -> list[tuple[str, Any, str, str]]:
        """(name, value, doc, source) for every setting."""
        return [(name, self.value(name), s.doc, s.source) for name, s in SETTINGS.items()]


SECTIONS = tuple(f.name for f in fields(Config) if f.name != "origins")


def _definitions() -> dict[str, Setting]:
    out = {}
    for section in fields(Config):
        if section.name == "origins":
            continue
        instance = section.default_factory()  # type: ignore[misc]
        for f in fields(instance):
            default = getattr(instance, f.name)
            m = f.metadata
            kind = float if default is None else type(default)
            out[f"{section.name}.{f.name}"] = Setting(
                section.name, f.name, default, kind, default is None, m["doc"], m["source"], m["low"],
                m["high"], m["above"], m["choices"], m["reingest"], m["user_only"], m["scores"], m["before"])
    return out


SETTINGS: dict[str, Setting] = _definitions()
# the settings a gate calibration is valid for (glassrag/gate/threshold.py), from their definitions
SCORING: tuple[str, ...] = tuple(name for name, s in SETTINGS.items() if s.scores)


def parse_sections(data: Any, origin: str) -> dict[str, dict[str, Any]]:
    """{section: {name: value}} from a TOML table or a stored index, every value checked."""
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: settings must be a table of [section] tables")
    out: dict[str, dict[str, Any]] = {}
    for name, values in data.items():
        if name not in SECTIONS:
            raise ConfigError(f"{origin}: unknown section [{name}]", f"sections are: {', '.join(SECTIONS)}")
        if not isinstance(values, dict):
            raise ConfigError(f"{origin}: [{name}] must be a table of settings")
        for key, value in values.items():
            s = SETTINGS.get(f"{name}.{key}")
            if s is None:
                known = [k.split(".", 1)[1] for k in SETTINGS if k.startswith(name + ".")]
                raise ConfigError(f"{origin}: unknown setting {name}.{key}",
                                  f"settings in [{name}]: {', '.join(known)}")
            out.setdefault(name, {})[key] = s.check(value, origin)
    return out


def read_settings(path: Path) -> dict[str, dict[str, Any]]:
    """The settings a TOML file names, checked (ConfigError naming the file otherwise)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as err:  # a folder, no permission
        raise ConfigError(f"{path}: cannot be read as a configuration file ({err.strerror})",
                          "give --config a TOML file") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})",
                          "TOML files are UTF-8: save it as UTF-8") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"{path}: nested too deep to be a configuration file") from None
    return parse_sections(data, str(path))


def load_config(path: Path | None) -> Config:
    """The defaults overridden by a TOML file's settings."""
    if path is None:
        return Config()
    return Config().updated(read_settings(path), str(path), "file")


def layered(base: Config, path: Path | None, flags: Mapping[str, Any] | None = None,
            built: bool = False) -> Config:
    """`base` (the defaults, or an index's settings) < the --config file < flags. `flags`:
    "--flag" → {section: {name: value}} for the flags given. With `built` (the index exists
    and is not being rebuilt), a file that changes a setting needing a re-ingest is refused."""
    config = base
    if path is not None:
        values = read_settings(path)
        if built:
            for section, changes in values.items():
                for key, value in changes.items():
                    name = f"{section}.{key}"
                    if SETTINGS[name].reingest and value != base.value(name):
                        raise ConfigError(
                            f"{name} = {toml_text(value)} in {path} needs a re-ingest: this index was "
                            f"built with {toml_text(base.value(name))}",
                            f"glassrag ingest PATHS --index DIR --config {path} applies it; for this "
                            f"command, leave {name} out of the file")
        config = config.updated(values, str(path), "file")
    for flag, values in (flags or {}).items():
        given = {s: {k: v for k, v in vals.items() if v is not None} for s, vals in values.items()}
        if any(given.values()):
            config = config.updated({s: v for s, v in given.items() if v}, flag, "flag")
    return config
