"""The sweep's grid on its own: the configurations it lists, their names, and every error a
flag or a sweep file can raise, with the message the user reads. No index is built here
(the sweep itself is tested in test_sweep.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.config import SETTINGS, Config
from glassrag.errors import ConfigError
from glassrag.evaluate.grid import (MAX_POINTS, Grid, combined, configure, distance, from_flags, from_toml,
                                    parse_set, point_name, reingest_settings, setting_of)

K1 = ("bm25.k1", (0.6, 1.2))
B = ("bm25.b", (0.3, 0.75))


def _error(call, *args) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        call(*args)
    return e.value


# Grid --------------------------------------------------------------------------------------

def test_points_list_the_configurations_then_every_combination_first_axis_slowest():
    grid = Grid((K1, B), (("literature", {"bm25.k1": 0.9}), ("", {"bm25.b": 0.4})))
    assert grid.points() == [
        ("001-literature", {"bm25.k1": 0.9}),
        ("002", {"bm25.b": 0.4}),  # a configuration without a name is its number
        ("003-k1-0.6_b-0.3", {"bm25.k1": 0.6, "bm25.b": 0.3}),
        ("004-k1-0.6_b-0.75", {"bm25.k1": 0.6, "bm25.b": 0.75}),
        ("005-k1-1.2_b-0.3", {"bm25.k1": 1.2, "bm25.b": 0.3}),
        ("006-k1-1.2_b-0.75", {"bm25.k1": 1.2, "bm25.b": 0.75}),
    ]
    assert len(grid) == 2 + 2 * 2
    # only listed configurations: no empty combination is added for the missing axes
    listed = Grid(listed=(("a", {"bm25.k1": 0.9}),))
    assert listed.points() == [("001-a", {"bm25.k1": 0.9})] and len(listed) == 1
    assert Grid().points() == [] and len(Grid()) == 0
    # numbered with three digits from 1: the tenth is 010
    ten = Grid((("fuse.k", tuple(range(1, 11))),))
    assert [name for name, _ in ten.points()][8:] == ["009-k-9", "010-k-10"] and len(ten) == 10


def test_points_are_copies():
    point = {"bm25.k1": 0.9}
    grid = Grid(listed=(("a", point),))
    grid.points()[0][1]["bm25.k1"] = 2.0
    assert point == {"bm25.k1": 0.9} and grid.points()[0][1] == {"bm25.k1": 0.9}


def test_settings_are_every_setting_changed_once_axes_first():
    grid = Grid((K1,), (("a", {"bm25.b": 0.3, "bm25.k1": 0.9}), ("b", {"fuse.k": 30, "bm25.b": 0.4})))
    assert grid.settings() == ["bm25.k1", "bm25.b", "fuse.k"]
    assert Grid().settings() == []


def test_to_dict():
    grid = Grid((K1, B), (("a", {"bm25.b": 0.3}),))
    assert grid.to_dict() == {
        "axes": [{"setting": "bm25.k1", "values": [0.6, 1.2]}, {"setting": "bm25.b", "values": [0.3, 0.75]}],
        "configs": [{"name": "a", "settings": {"bm25.b": 0.3}}]}
    assert Grid().to_dict() == {"axes": [], "configs": []}


# names -------------------------------------------------------------------------------------

def test_a_point_is_named_by_its_keys_and_values_in_a_file_name_safe_way():
    assert point_name({"bm25.k1": 0.6, "bm25.b": 0.3}) == "k1-0.6_b-0.3"
    assert point_name({"fuse.k": 60}) == "k-60"
    # a list's values are joined by "-" (a "+" would be dropped by the file-name filter)
    assert point_name({"retrieve.retrievers": ["bm25", "lsa"]}) == "retrievers-bm25-lsa"
    assert point_name({"mmr.relevance": None}) == "relevance-off"
    assert point_name({"gate.enabled": False}) == "enabled-false"
    assert point_name({"chunk.chunker": "heading"}) == "chunker-heading"  # no quotes
    # a string of any characters: only letters, digits, '.', '_' and '-' are kept (an 'X' too)
    assert point_name({"rerank.model": "Xa/b c\"d"}) == "model-Xabcd"
    assert point_name({}) == ""
    # cut at 100 characters: "retrievers-" (11) + 30 × "bm25" (120, the "+"s dropped)
    long = point_name({"retrieve.retrievers": ["bm25"] * 30})
    assert long == ("retrievers-" + "-".join(["bm25"] * 30))[:100] and len(long) == 100


# one setting from the command line -----------------------------------------------------------

def test_setting_of_gives_the_definition_or_lists_the_settings_of_its_section():
    assert setting_of("bm25.k1", "here") is SETTINGS["bm25.k1"]
    e = _error(setting_of, "bm25.k", "--set bm25.k=1")
    assert e.problem == "--set bm25.k=1: unknown setting 'bm25.k'"
    assert e.hint == "settings in [bm25]: bm25.k1, bm25.b, bm25.rm3_docs, bm25.rm3_terms, bm25.rm3_weight"
    # a section that is only the start of another's name lists nothing of that one
    e = _error(setting_of, "bm.k1", "f.toml")
    assert e.problem == "f.toml: unknown setting 'bm.k1'"
    assert e.hint == "glassrag config lists every setting (section.name)"
    assert _error(setting_of, "k1", "x").hint == "glassrag config lists every setting (section.name)"
    # the section is the name up to its first dot
    assert _error(setting_of, "bm25.k1.x", "x").hint.startswith("settings in [bm25]: bm25.k1, bm25.b,")


def test_parse_set_values_and_the_setting_name_around_spaces():
    assert parse_set(" bm25.k1 = 0.6, 1 ,1.2") == ("bm25.k1", (0.6, 1.0, 1.2))
    assert parse_set("fuse.k=30,60") == ("fuse.k", (30, 60))
    assert parse_set("chunk.chunker=fixed") == ("chunk.chunker", ("fixed",))
    assert parse_set("rerank.model=a=b") == ("rerank.model", ("a=b",))  # the name ends at the first '='
    assert _error(parse_set, "bm25.k=1").problem == "--set bm25.k=1: unknown setting 'bm25.k'"
    # a list setting takes its alternatives separated by ';', each a comma list
    assert parse_set("retrieve.retrievers=bm25;bm25, lsa") == ("retrieve.retrievers", (["bm25"], ["bm25", "lsa"]))
    # an optional setting may be left out (off) by an empty value or "off"
    assert parse_set("mmr.relevance=0.5,off") == ("mmr.relevance", (0.5, None))
    assert parse_set("mmr.relevance=0.5,") == ("mmr.relevance", (0.5, None))


@pytest.mark.parametrize("flag", ["bm25.k1", "=0.6", " =0.6", "bm25.k1=", "bm25.k1=  "])
def test_a_set_without_a_name_or_values_says_what_is_expected(flag: str):
    e = _error(parse_set, flag)
    assert e.problem == f"--set {flag}: expected SECTION.NAME=VALUE,VALUE,…"
    assert e.hint == "e.g. --set bm25.k1=0.6,0.9,1.2"


def test_an_empty_value_in_a_set_says_how_to_separate_values():
    e = _error(parse_set, "bm25.k1=0.6,,0.9")
    assert e.problem == "--set bm25.k1=0.6,,0.9: an empty value in the list"
    assert e.hint == "separate the values by commas: 0.6,0.9"
    e = _error(parse_set, "bm25.k1=0.6, ")
    assert e.problem == "--set bm25.k1=0.6, : an empty value in the list"
    e = _error(parse_set, "retrieve.retrievers=bm25;;lsa")
    assert e.problem == "--set retrieve.retrievers=bm25;;lsa: an empty value in the list"
    assert e.hint == "separate the values by commas: a;b"


def test_a_value_given_twice_is_named():
    e = _error(parse_set, "bm25.k1=0.6,0.9,0.6")
    assert e.problem == "--set bm25.k1=0.6,0.9,0.6: bm25.k1 lists 0.6 twice" and e.hint == ""
    # the first value met again is named: 0.9 comes back before 0.6 does; 1 is 1.0 for a number
    assert "bm25.k1 lists 0.9 twice" in str(_error(parse_set, "bm25.k1=0.6,0.9,0.9,0.6"))
    assert "bm25.k1 lists 1.0 twice" in str(_error(parse_set, "bm25.k1=1,1.0"))
    assert "mmr.relevance lists (off) twice" in str(_error(parse_set, "mmr.relevance=,off"))
    assert 'retrieve.retrievers lists ["bm25"] twice' in str(_error(parse_set, "retrieve.retrievers=bm25;lsa;bm25"))


def test_a_bad_value_is_the_setting_s_own_error_naming_the_flag():
    e = _error(parse_set, "bm25.k1=0.6,abc")
    assert e.problem == 'bm25.k1 = "abc" in --set bm25.k1=0.6,abc: must be a number from 0 to 100'
    assert e.hint == "the default is 1.5"


def test_flags_make_a_grid_of_their_axes_in_order():
    assert from_flags([]) == Grid()
    assert from_flags(["bm25.b=0.3,0.75", "bm25.k1=0.6,1.2"]) == Grid((B, K1))
    e = _error(from_flags, ["bm25.k1=0.6", "bm25.b=0.3", "bm25.b=0.4", "bm25.k1=0.9"])
    assert e.problem == "--set: bm25.b is swept twice"  # the first setting met again
    assert e.hint == "give each setting once, with all its values"


# a sweep file --------------------------------------------------------------------------------

def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_sweep_file_with_a_grid_and_configurations(tmp_path: Path):
    path = _toml(tmp_path, '[grid.bm25]\nk1 = [0.6, 1]\nb = [0.3]\n[grid.fuse]\nk = [30]\n\n'
                           '[[configs]]\nname = "literature"\nbm25 = { k1 = 0.9, b = 0.4 }\n\n'
                           '[[configs]]\nfuse = { method = "rrf" }\nretrieve = { retrievers = ["bm25", "lsa"] }\n')
    grid = from_toml(path)
    # integers where numbers are expected become floats; a configuration without a name is ""
    assert grid == Grid((("bm25.k1", (0.6, 1.0)), ("bm25.b", (0.3,)), ("fuse.k", (30,))),
                        (("literature", {"bm25.k1": 0.9, "bm25.b": 0.4}),
                         ("", {"fuse.method": "rrf", "retrieve.retrievers": ["bm25", "lsa"]})))
    assert [name for name, _ in grid.points()] == ["001-literature", "002", "003-k1-0.6_b-0.3_k-30",
                                                   "004-k1-1.0_b-0.3_k-30"]
    only_configs = from_toml(_toml(tmp_path, '[[configs]]\nname = "a"\nbm25 = { k1 = 0.9 }\n'))
    assert only_configs == Grid((), (("a", {"bm25.k1": 0.9}),))
    lists = from_toml(_toml(tmp_path, '[grid.retrieve]\nretrievers = [["bm25"], ["bm25", "lsa"]]\n'))
    assert lists == Grid((("retrieve.retrievers", (["bm25"], ["bm25", "lsa"])),))


def test_a_sweep_file_that_cannot_be_read(tmp_path: Path):
    missing = tmp_path / "none.toml"
    e = _error(from_toml, missing)
    assert e.problem == f"{missing}: no such sweep file"
    e = _error(from_toml, tmp_path)  # a folder
    assert e.problem.startswith(f"{tmp_path}: cannot be read as a TOML sweep file (")
    assert "Is a directory" in e.problem and e.problem.endswith(")")
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"# caf\xe9\n")
    e = _error(from_toml, latin)
    assert e.problem.startswith(f"{latin}: cannot be read as a TOML sweep file (") and "utf-8" in e.problem
    e = _error(from_toml, _toml(tmp_path, "[grid.bm25\nk1 = [1]\n"))
    assert e.problem.startswith(f"{tmp_path / 'sweep.toml'}: not valid TOML: ") and "(at line 1" in e.problem


@pytest.mark.parametrize("text, problem, hint", [
    ("[grids.bm25]\nk1 = [1]\n[other]\n", "unknown table [grids]",
     "a sweep file has [grid.SECTION] tables of value lists and/or [[configs]]"),
    ("grid = 3\n", "[grid] must be a table of [grid.SECTION] tables", ""),
    ("[grid]\nbm25 = [1]\n", "[grid.bm25] must be a table of settings, each a list of values", ""),
    ("[grid.bm25]\nk = [1]\n", "unknown setting 'bm25.k'",
     "settings in [bm25]: bm25.k1, bm25.b, bm25.rm3_docs, bm25.rm3_terms, bm25.rm3_weight"),
    ("[grid.bm25]\nk1 = 0.9\n", "bm25.k1 in [grid] must be a non-empty list of values", "e.g. k1 = [1.5, …]"),
    ("[grid.bm25]\nk1 = []\n", "bm25.k1 in [grid] must be a non-empty list of values", "e.g. k1 = [1.5, …]"),
    ("[grid.chunk]\nchunker = []\n", "chunk.chunker in [grid] must be a non-empty list of values",
     'e.g. chunker = ["heading", …]'),
    ('[grid.retrieve]\nretrievers = ["bm25", "lsa"]\n',
     "retrieve.retrievers in [grid] must be a non-empty list of values",
     'e.g. retrievers = [["bm25"], ["bm25", "lsa"]]'),
    ('[grid.retrieve]\nretrievers = [["bm25"], "lsa"]\n',
     "retrieve.retrievers in [grid] must be a non-empty list of values",
     'e.g. retrievers = [["bm25"], ["bm25", "lsa"]]'),
    ("[grid.bm25]\nk1 = [0.9, 1, 0.9]\n", "bm25.k1 lists 0.9 twice", ""),
    ("[grid.bm25]\nk1 = [1, 1.0]\n", "bm25.k1 lists 1.0 twice", ""),
    ("configs = 3\n", "configs must be an array of tables: [[configs]]", ""),
    ("configs = [1]\n", "configs entry 1 must be a table", ""),
    ('configs = [{name = "a"}, 2]\n', "configs entry 2 must be a table", ""),
    ('[[configs]]\nname = "a b"\n', "configs entry 1: name must be letters, digits, '.', '_' or '-'", ""),
    ("[[configs]]\nname = 3\n", "configs entry 1: name must be letters, digits, '.', '_' or '-'", ""),
    (f'[[configs]]\nname = "{"a" * 61}"\n', "configs entry 1: name must be letters, digits, '.', '_' or '-'", ""),
    ('[[configs]]\nname = "a"\n[[configs]]\nname = "b/c"\n',
     "configs entry 2: name must be letters, digits, '.', '_' or '-'", ""),
    ("", "no configuration to evaluate", "add a [grid.SECTION] table or [[configs]]"),
    ("[grid]\n", "no configuration to evaluate", "add a [grid.SECTION] table or [[configs]]"),
])
def test_a_bad_sweep_file_names_itself_and_what_is_wrong(tmp_path: Path, text: str, problem: str, hint: str):
    path = _toml(tmp_path, text)
    e = _error(from_toml, path)
    assert e.problem == f"{path}: {problem}"
    assert e.hint == hint


def test_a_bad_value_or_configuration_in_a_sweep_file_names_where(tmp_path: Path):
    path = _toml(tmp_path, "[grid.bm25]\nk1 = [0.9, 200]\n")
    e = _error(from_toml, path)
    assert e.problem == f"bm25.k1 = 200 in [grid] of {path}: must be a number from 0 to 100"
    path = _toml(tmp_path, '[[configs]]\nname = "a"\n\n[[configs]]\nbm25 = { k = 1 }\n')
    e = _error(from_toml, path)
    assert e.problem == f"{path} (configs entry 2): unknown setting bm25.k"
    # a name of 60 letters (either case), digits, '.', '_' and '-' is allowed
    name = "a" * 55 + "Z._-9"
    path = _toml(tmp_path, f'[[configs]]\nname = "{name}"\nbm25 = {{ b = 0.3 }}\n')
    assert from_toml(path).points() == [(f"001-{name}", {"bm25.b": 0.3})]


# several sources together ----------------------------------------------------------------------

def test_combined_joins_axes_and_lists_and_refuses_a_setting_swept_twice():
    a = Grid((K1,), (("x", {"fuse.k": 30}),))
    b = Grid((B,), (("y", {"fuse.k": 40}),))
    assert combined(a, b) == Grid((K1, B), (("x", {"fuse.k": 30}), ("y", {"fuse.k": 40})))
    assert combined(Grid(listed=(("x", {}),))) == Grid(listed=(("x", {}),))
    e = _error(combined, a, Grid((("bm25.k1", (0.9,)),)))
    assert e.problem == "the sweep: bm25.k1 is swept twice"
    e = _error(combined, Grid(), Grid())
    assert e.problem == "nothing to sweep"
    assert e.hint == "give --set SECTION.NAME=V1,V2,… or a sweep file (--grid FILE)"


def test_combined_allows_max_points_configurations_and_not_one_more():
    assert MAX_POINTS == 10_000
    hundred = tuple(range(100))
    square = Grid((("fuse.k", hundred), ("bm25.rm3_docs", hundred)))  # 100 × 100 = 10,000
    assert len(combined(square)) == 10_000
    e = _error(combined, square, Grid(listed=(("one", {}),)))
    assert e.problem == "the sweep has 10,001 configurations; the limit is 10,000"
    assert e.hint == "sweep fewer values at once"


# a point against the starting settings --------------------------------------------------------

def test_configure_sets_every_setting_of_a_point_as_coming_from_the_sweep():
    base = Config()
    config = configure(base, {"bm25.k1": 0.9, "bm25.b": 0.3, "fuse.k": 30})
    assert (config.value("bm25.k1"), config.value("bm25.b"), config.value("fuse.k")) == (0.9, 0.3, 30)
    assert config.origin("bm25.k1") == config.origin("fuse.k") == ("flag", "sweep")
    assert config.origin("bm25.rm3_docs") == ("default", "")
    assert base.value("bm25.k1") == 1.5 and base.origins == {}
    assert configure(base, {}) == base
    e = _error(configure, base, {"bm25.k1": -1.0})
    assert e.problem == "bm25.k1 = -1.0 in sweep: must be a number from 0 to 100"


def test_distance_of_each_kind_of_setting():
    base = Config()  # bm25.k1 1.5, bm25.b 0.4, fuse.k 60, mmr.relevance None, chunk.chunker "heading"
    # a setting left as it is counts for nothing, wherever it is in the point
    assert distance({"bm25.b": 0.4, "bm25.k1": 1.2}, base) == (1, pytest.approx(0.3 / 1.5))
    assert distance({"bm25.k1": 1.8}, base) == (1, pytest.approx(0.3 / 1.5))  # up or down alike
    assert distance({"bm25.b": 0.1}, base) == (1, pytest.approx(0.3 / 1.0))  # a default below 1 divides by 1
    assert distance({"fuse.k": 30}, base) == (1, 30 / 60)  # integers too
    assert distance({"mmr.relevance": 0.5}, base) == (1, 1.0)  # off → a number: not a number change
    assert distance({"gate.enabled": False}, base) == (1, 1.0)
    assert distance({"retrieve.retrievers": ["bm25", "lsa"], "chunk.chunker": "fixed"}, base) == (2, 2.0)
    assert distance({}, base) == (0, 0.0)


def test_reingest_settings_are_those_an_index_is_built_with():
    expected = {"chunk.chunker": "heading", "chunk.size": 200, "chunk.overlap": 0, "chunk.unit": "words",
                "chunk.context_header": False, "analyze.stopwords": "english", "analyze.stem": True,
                "analyze.identifiers": True, "lsa.dim": 64, "lsa.power_iterations": 4, "lsa.seed": 0,
                "lsa.fit_sample": 100000, "neural.models": [], "neural.passage_instruction": "auto",
                "neural.quantize": "none", "neural.batch_size": 32, "neural.backend": "auto",
                "postgres.vector_type": "vector",
                "postgres.hnsw_m": 16, "postgres.hnsw_ef_construction": 64}
    assert reingest_settings(Config()) == expected
    assert reingest_settings(configure(Config(), {"chunk.size": 100, "bm25.k1": 0.9})) == {
        **expected, "chunk.size": 100}
