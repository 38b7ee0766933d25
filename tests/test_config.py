from pathlib import Path

import pytest

from glassrag.config import Config, load_config
from glassrag.errors import ConfigError


def test_every_setting_has_a_doc_and_a_source():
    rows = Config().describe()
    assert len(rows) > 15
    for name, _value, doc, source in rows:
        assert doc and source, name


def test_toml_overrides_and_roundtrip(tmp_path: Path):
    path = tmp_path / "c.toml"
    path.write_text('[bm25]\nk1 = 1\n[retrieve]\nretrievers = ["bm25"]\n')
    config = load_config(path)
    assert config.bm25.k1 == 1.0 and isinstance(config.bm25.k1, float)
    assert config.retrieve.retrievers == ["bm25"]
    assert Config.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("text,message", [
    ("[bm25]\nk3 = 1\n", "unknown setting bm25.k3"),
    ("[bm24]\nk1 = 1\n", r"unknown section \[bm24\]"),
    ("[bm25]\nk1 = 'high'\n", "bm25.k1 = 'high' should be a float"),
    ("[bm25\n", "not valid TOML"),
])
def test_bad_settings_name_the_file_and_the_key(tmp_path: Path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_missing_config_file():
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(Path("/nonexistent/glassrag.toml"))
