"""Settings: each defined once in config.py (type, range, choices, re-ingest), checked the
same way in TOML files, command-line flags and the web form, and layered so that a file
overrides only what it names (issue 13, item 5)."""

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glassrag.config import SETTINGS, Config, layered, load_config, toml_text
from glassrag.errors import ConfigError
from tests.cli_helper import glassrag


def test_every_setting_has_a_doc_and_a_source():
    rows = Config().describe()
    assert len(rows) > 15
    for name, _value, doc, source in rows:
        assert doc and source, name
        assert "issue" not in source, f"{name} cites an issue, not a measurement: {source}"


def test_every_default_is_allowed_by_its_own_definition():
    for name, s in SETTINGS.items():
        assert s.check(s.default, "defaults") == s.default, name
        if s.kind in (int, float) and not s.optional:
            assert s.low is not None, f"{name} has no range"


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
    ("[bm25]\nk1 = 'high'\n", 'bm25.k1 = "high" in .*: must be a number from 0 to 100'),
    ("[answer]\nk = 2.5\n", "answer.k = 2.5 in .*: must be an integer from 1 to 50"),
    ("[gate]\nenabled = 'yes'\n", 'gate.enabled = "yes" in .*: must be true or false'),
    ("[bm25\n", "not valid TOML"),
])
def test_bad_settings_name_the_file_and_the_key(tmp_path: Path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_the_hint_writes_the_default_as_toml_does(tmp_path: Path):
    """"the default is True" was Python; TOML says true, and strings are quoted."""
    path = tmp_path / "c.toml"
    path.write_text("[gate]\nenabled = 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.hint == "the default is true"
    path.write_text("[chunk]\nchunker = 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.hint == 'the default is "heading"'


# the values of issue 13, item 5: each accepted before, each refused now with the setting, the
# value, the file and what is allowed
OUT_OF_RANGE = [
    ("bm25", "k1", "-1", "≥ 0|from 0 to"), ("bm25", "k1", "nan", "from 0 to 100"),
    ("bm25", "k1", "inf", "from 0 to 100"), ("bm25", "b", "1.5", "from 0 to 1"),
    ("answer", "k", "0", "from 1 to 50"), ("answer", "k", "-3", "from 1 to 50"),
    ("retrieve", "depth", "0", "from 1 to 10_000"), ("rerank", "pool", "0", "from 1 to 10_000"),
    ("mmr", "relevance", "2.0", "from 0 to 1"), ("answer", "excerpt_chars", "-5", "from 40 to"),
    ("gate", "rule", '"bogus"', "one of: cost, balanced, keep95"), ("lsa", "dim", "-1", "from 1 to"),
    ("gate", "cost", "0", "> 0"), ("fuse", "method", '"max"', "one of: rrf, weighted"),
    ("versions", "mode", '"hide"', "one of: off, demote, drop"), ("chunk", "size", "0", "≥ 1"),
    ("chunk", "chunker", '"magic"', "one of: fixed, sentence, heading, heading-body, recursive, document"),
    ("cap", "per_document", "-1", "from 0 to"), ("neural", "quantize", '"int4"', "one of: none, int8"),
]


@pytest.mark.parametrize("section,key,value,allowed", OUT_OF_RANGE)
def test_out_of_range_values_in_a_file_are_refused(tmp_path: Path, section, key, value, allowed):
    path = tmp_path / "my.toml"
    path.write_text(f"[{section}]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    problem = info.value.problem
    assert problem.startswith(f"{section}.{key} = {value} in {path}: must be "), problem
    assert any(a in problem for a in allowed.split("|")), problem


def test_the_message_of_the_issue():
    with pytest.raises(ConfigError) as info:
        Config.from_dict({"bm25": {"k1": -1}}, origin="my.toml")
    assert info.value.problem == "bm25.k1 = -1 in my.toml: must be a number from 0 to 100"


@pytest.mark.slow
@pytest.mark.parametrize("flag,value", [("--k", "-2"), ("--k", "0"), ("--k", "51"), ("--k", "two")])
def test_ask_refuses_a_bad_k_before_anything_runs(flag, value, tmp_path: Path):
    """`ask --k -2` returned 9 passages and `--k 0` meant 5."""
    r = glassrag("ask", "anything", "--index", tmp_path / "none", flag, value)
    assert r.returncode == 2, r.stderr
    assert f"argument --k: '{value}': answer.k must be an integer from 1 to 50" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("args,expected", [
    (["--size", "0"], "argument --size: '0': chunk.size must be an integer ≥ 1"),
    (["--overlap", "-1"], "argument --overlap: '-1': chunk.overlap must be an integer ≥ 0"),
    (["--unit", "lines"], "argument --unit: 'lines': chunk.unit must be one of: words, tokens, chars"),
])
def test_ingest_flags_are_checked_by_the_same_definitions(corpus: Path, tmp_path: Path, args, expected):
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx", *args)
    assert r.returncode == 2 and expected in r.stderr, r.stderr
    assert not (tmp_path / "idx").exists()


@pytest.mark.slow
def test_calibrate_flags_are_checked(tmp_path: Path):
    r = glassrag("calibrate", "--index", tmp_path, "--golden", tmp_path / "g.jsonl", "--cost", "-1")
    assert r.returncode == 2 and "gate.cost must be a number > 0" in r.stderr, r.stderr
    r = glassrag("calibrate", "--index", tmp_path, "--golden", tmp_path / "g.jsonl", "--rule", "bogus")
    assert r.returncode == 2 and "gate.rule must be one of: cost, balanced, keep95" in r.stderr, r.stderr


@pytest.mark.slow
def test_flag_help_comes_from_the_definition():
    r = glassrag("ingest", "--help")
    text = " ".join(r.stdout.split())
    assert "fixed, sentence, heading, heading-body (no heading-only chunk), recursive, document" in text
    for option in ("--chunker", "--size", "--overlap", "--unit", "--config", "--embedder"):
        assert option in text


def test_the_web_form_uses_the_same_definitions():
    from glassrag.web.catalog import BadRequest
    from glassrag.web.settings import parse

    for name, raw in [("bm25.k1", "-1"), ("answer.k", "0"), ("mmr.relevance", "2.0"),
                      ("gate.rule", "bogus"), ("rerank.pool", "0")]:
        with pytest.raises(BadRequest) as web:
            parse({name: raw}, ("bm25",))
        with pytest.raises(ConfigError) as toml:
            SETTINGS[name].parse(raw, "the page's settings")
        assert web.value.problem == toml.value.problem
        assert "must be" in web.value.problem


# layers: defaults < index < --config file < flags -------------------------------------------

def test_a_file_overrides_only_what_it_names(tmp_path: Path):
    index_config = Config.from_dict({"retrieve": {"retrievers": ["bm25", "minilm"]},
                                     "fuse": {"method": "weighted", "weight": 0.35},
                                     "neural": {"models": ["minilm"]}}, "manifest.json", "index")
    path = tmp_path / "k3.toml"
    path.write_text("[answer]\nk = 3\n")
    config = layered(index_config, path, {"--k": {"answer": {"k": None}}}, built=True)
    assert config.retrieve.retrievers == ["bm25", "minilm"]
    assert (config.fuse.method, config.fuse.weight) == ("weighted", 0.35)
    assert config.answer.k == 3
    assert config.origin("answer.k") == ("file", str(path))
    assert config.origin("fuse.weight") == ("index", "manifest.json")
    assert config.origin("bm25.k1") == ("default", "")
    flagged = layered(index_config, path, {"--k": {"answer": {"k": 7}}}, built=True)
    assert flagged.answer.k == 7 and flagged.origin("answer.k") == ("flag", "--k")


def test_a_file_cannot_change_what_the_index_was_built_with(tmp_path: Path):
    path = tmp_path / "c.toml"
    path.write_text("[chunk]\nsize = 50\n")
    with pytest.raises(ConfigError, match=r"chunk.size = 50 in .*c.toml needs a re-ingest: this index "
                                          r"was built with 200"):
        layered(Config(), path, built=True)
    path.write_text("[chunk]\nsize = 200\n[bm25]\nk1 = 1.2\n")  # the same value is fine
    assert layered(Config(), path, built=True).bm25.k1 == 1.2


def test_an_index_stores_what_was_set_and_what_needs_a_reingest():
    config = Config().with_overrides(bm25={"k1": 1.2})
    stored = config.stored()
    assert stored["bm25"] == {"k1": 1.2}
    assert "answer" not in stored and "gate" not in stored  # defaults: not pinned
    assert stored["chunk"] == Config().to_dict()["chunk"]
    assert set(stored["lsa"]) == {"dim", "power_iterations", "seed", "fit_sample"}


@pytest.mark.slow
def test_an_index_built_with_an_embedder_keeps_fusion_under_a_config_file(corpus: Path, tmp_path: Path):
    """A --config file that sets only [answer] k = 3 dropped the neural retriever and the
    fusion of an index built with --embedder; the same path is taken by any fused setting
    the index stores, here LSA fused with RRF."""
    from glassrag.indexer import with_embedder

    assert with_embedder(Config(), "minilm").stored()["retrieve"]["retrievers"] == ["bm25", "minilm"]
    built = tmp_path / "built.toml"
    built.write_text('[retrieve]\nretrievers = ["bm25", "lsa"]\nobserve = []\n[fuse]\nmethod = "rrf"\n')
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx, "--config", built).returncode == 0
    manifest = next(idx.glob("gen-*/manifest.json"))
    stored = json.loads(manifest.read_text())["config"]
    assert stored["retrieve"]["retrievers"] == ["bm25", "lsa"] and "answer" not in stored
    k3 = tmp_path / "k3.toml"
    k3.write_text("[answer]\nk = 3\n")
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx, "--config", k3, "--json")
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)
    kinds = [(t["name"], t["kind"]) for t in answer["trace"]]
    assert ("lsa", "retrieve") in kinds and any(k == "fuse" for _, k in kinds), kinds
    assert len(answer["also_found"]) + (answer["passage"] is not None) <= 3
    # a re-ingest without the file keeps what the index was built with
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    r = glassrag("config", "--index", idx, "--config", k3)
    rows = {m[1]: m[0] for m in re.finditer(r"^│ ([a-z0-9_]+\.[a-z0-9_]+) .*$", r.stdout, re.M)}
    assert "index" in rows["retrieve.retrievers"] and "file" in rows["answer.k"]
    assert "default" in rows["bm25.k1"] and "yes" in rows["chunk.size"]


# property: the settings parser ------------------------------------------------------------

@given(name=st.sampled_from(sorted(SETTINGS)), text=st.text(max_size=30))
def test_any_text_is_parsed_to_an_allowed_value_or_refused_with_a_message(name, text):
    s = SETTINGS[name]
    try:
        value = s.parse(text, "a test")
    except ConfigError as e:
        assert e.problem.startswith(name) and ("must be" in e.problem or "long" in e.problem)
        return
    assert s.check(value, "a test") == value or (isinstance(value, float) and math.isnan(value))


@given(name=st.sampled_from(sorted(SETTINGS)), data=st.data())
def test_an_allowed_value_survives_text_and_toml(name, data):
    s = SETTINGS[name]
    choices = s.choices()
    if choices:
        value = data.draw(st.sampled_from(choices))
    elif s.kind is int:
        value = data.draw(st.integers(int(s.low), int(s.high if s.high is not None else 10**9)))
    elif s.kind is float:
        value = data.draw(st.floats(s.low, s.high, allow_nan=False).filter(lambda v: not (s.above and v == s.low)))
    elif s.kind is bool:
        value = data.draw(st.booleans())
    else:
        return
    text = toml_text(value).strip('"') if isinstance(value, str) else str(value).lower()
    assert s.parse(text, "a test") == value
    assert Config.from_dict({s.section: {s.key: value}}).value(name) == value
