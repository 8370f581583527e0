"""Bounded input and bounded error messages: a config or study file small on disk cannot become a
huge value (YAML aliases), an over-large one is refused before it is read, and a value in an error
message is shown truncated with its type and size, never whole."""
import tracemalloc

import pytest

from cselab.model.config import ConfigError, load_config, parse_mapping
from cselab.model.options import YAML_MAX_BYTES, load_yaml, parse_key_values, shown
from cselab.workbench.studies import StudyError, load_study


def alias_bomb(levels: int, width: int = 9, indent: str = "  ") -> str:
    """``levels`` YAML anchors, each a list of ``width`` aliases of the one before: width**levels
    values from a few hundred bytes."""
    lines = [f"{indent}- &l0 [{', '.join(['x'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"{indent}- &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines)


@pytest.mark.parametrize("key", ["batch_size", "model", "run_name"])
def test_alias_bomb_is_refused_before_it_is_expanded(tmp_path, key):
    path = tmp_path / "bomb.yaml"
    # 9^7 = 4.8 million values in 300 bytes: the expanded value's repr alone would be 24 MB
    path.write_text(f"max_steps: 2\n{key}:\n{alias_bomb(7)}\n")
    assert path.stat().st_size < 400
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError) as info:
            load_config(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert message.startswith(f"{path}:")
    assert "aliases expand to more than 100,000 values" in message
    assert len(message) < 300
    assert peak < 5_000_000, peak


def test_alias_bomb_in_a_method_section_and_in_an_override(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(f"method: esimcse\nesimcse:\n  dup_rate:\n{alias_bomb(7, indent='    ')}\n")
    with pytest.raises(ConfigError, match=r"bomb\.yaml:\d+: cannot parse \(its aliases expand"):
        load_config(path)
    flow = "[&a [x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a], " + ", ".join(
        f"&{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("bcdef", "cdefg")) + "]"
    with pytest.raises(ConfigError, match=r"override esimcse\.dup_rate: cannot parse value '\[&a.*\(a str of \d+ "
                                          r"characters\)$"):
        load_config(None, [f"esimcse.dup_rate={flow}", "method=esimcse"])


def test_a_few_aliases_still_load():
    assert load_yaml("a: &a [1, 2]\nb: *a\n") == {"a": [1, 2], "b": [1, 2]}
    # exactly at the bound: 1 list + 99,999 items
    assert len(load_yaml("[" + ", ".join(["1"] * 99_999) + "]")) == 99_999
    with pytest.raises(Exception, match="more than 100,000 values"):
        load_yaml("[" + ", ".join(["1"] * 100_000) + "]")


@pytest.mark.parametrize("text, problem", [
    ("a: &a [*a]", "an alias refers to the collection that contains it"),
    ("a: " + "[" * 3000 + "]" * 3000, "nested too deeply"),
    ("batch_size: " + "9" * 5000, "Exceeds the limit (4300 digits)"),
])
def test_self_reference_depth_and_huge_integers_are_one_line(tmp_path, text, problem):
    path = tmp_path / "odd.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}")
    assert problem in str(info.value)
    assert "\n" not in str(info.value)


def test_over_large_config_and_study_files_are_refused_unread(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("max_steps: [" + ",".join(["1"] * 2_000_000) + "]\n")   # 4 MB
    with pytest.raises(ConfigError, match=rf"big\.yaml: 4,000,013 bytes; a config file has at most {YAML_MAX_BYTES:,}$"):
        load_config(big)
    study = tmp_path / "study.yaml"
    study.write_text("name: x\ndescription: '" + "x" * (YAML_MAX_BYTES + 1) + "'\n")
    with pytest.raises(StudyError, match=r"study\.yaml: 1,048,6\d\d bytes; a study file has at most"):
        load_study(study)


def test_a_long_list_or_string_in_a_message_is_truncated_with_type_and_size():
    with pytest.raises(ConfigError) as info:
        parse_mapping({"max_steps": [1] * 2_000_000})
    assert str(info.value) == "max_steps: expected an integer, got [1, 1, 1, 1, ...] (a list of 2,000,000 items)"
    with pytest.raises(ConfigError) as info:
        parse_mapping({"run_name": "r" * 10_000_000})
    message = str(info.value)
    assert len(message) < 400
    assert "'rrrrrrrrrrrrrrrrrrrrrrrr" in message and "(a str of 10,000,000 characters)" in message
    with pytest.raises(ConfigError) as info:
        parse_mapping({"batch_size": {f"k{i}": i for i in range(100_000)}})
    assert str(info.value) == ("batch_size: expected an integer, got {'k0': 0, 'k1': 1, 'k10': 10, 'k100': 100, "
                               "...} (a dict of 100,000 keys)")


def test_shown():
    assert shown(3) == "3"
    assert shown("abc") == "'abc'"
    assert shown([1, 2]) == "[1, 2]"
    assert shown([[[[1]]]]) == "[[[[...]]]] (a list of 1 item)"
    assert shown("x" * 61) == "'" + "x" * 27 + "..." + "x" * 28 + "' (a str of 61 characters)"
    assert shown(10 ** 1000) == "an integer of 3,322 bits"
    assert shown(True) == "True"


def test_method_must_be_a_name_or_a_non_empty_list_of_names():
    with pytest.raises(ConfigError, match=r"^method: expected a method name or a non-empty list of names \(.*\), "
                                          r"got \[\['simcse'\]\]$"):
        parse_mapping({"method": [["simcse"]]})
    with pytest.raises(ConfigError, match=r"^method: expected .*, got \[\]$"):
        parse_mapping({"method": []})
    with pytest.raises(ConfigError, match=r"^method: expected .*, got \[1\]$"):
        load_config(None, ["method=[1]"])
    with pytest.raises(ConfigError, match=r"^method: expected .*, got None$"):
        load_config(None, ["method="])


def test_key_value_items_are_shown_bounded():
    with pytest.raises(ConfigError) as info:
        parse_key_values(["x" * 100_000], "override")
    assert len(str(info.value)) < 200 and "(a str of 100,000 characters)" in str(info.value)


def test_a_key_written_twice_is_refused_at_its_second_line(tmp_path):
    """PyYAML keeps the last of two equal keys silently: batch_size 8 then 64 trained with 64."""
    path = tmp_path / "twice.yaml"
    path.write_text("batch_size: 8\nmodel: all-minilm-l6\nbatch_size: 64\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (f"{path}:3: cannot parse (the key 'batch_size' is written twice (also at line 1); "
                              "YAML would keep the last one silently)")
    path.write_text("method: esimcse\nesimcse:\n  queue_size: 32\n  queue_size: 64\n")
    with pytest.raises(ConfigError, match=r"twice\.yaml:4: cannot parse \(the key 'queue_size' is written twice"):
        load_config(path)
    study = tmp_path / "study.yaml"
    study.write_text("name: s\nruns:\n  - label: a\n    seeds: [1]\n    seeds: [2]\n")
    with pytest.raises(StudyError, match=r"study\.yaml:5: cannot parse \(the key 'seeds' is written twice \(also at "
                                         r"line 4\)"):
        load_study(study)
    assert load_yaml("a: &a {x: 1}\nb: *a\nc: {<<: *a, y: 2}\n") == {"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 1, "y": 2}}


def test_keys_equal_as_values_are_one_key_and_refused(tmp_path):
    """A sweep's points 0.1 and 0.10 are one float key: PyYAML kept the last point without a word. Keys
    are compared as PyYAML constructs them (1 and 1.0 too, as a dict does), text keys as text."""
    study = tmp_path / "study.yaml"
    study.write_text("name: s\nrecord_figures:\n  - name: lr\n    kind: sweep\n    points:\n      0.1: a\n"
                     "      0.10: b\n")
    with pytest.raises(StudyError) as err:
        load_study(study)
    assert str(err.value) == (f"{study}:7: cannot parse (the key '0.10' is the key '0.1' again (also at line 6); "
                              "YAML would keep the last one silently)")
    with pytest.raises(Exception, match=r"the key '1\.0' is the key '1' again \(also at line 1\)"):
        load_yaml("1: a\n1.0: b\n")
    assert load_yaml("1: a\n'1': b\n0.1: c\n0.2: d\n") == {1: "a", "1": "b", 0.1: "c", 0.2: "d"}


def test_a_json_config_refuses_a_key_written_twice_as_yaml_does(tmp_path):
    """json keeps the last of two equal keys silently (batch_size 8 then 64 trained with 64): refused at the
    second one's line, naming the file, the key and the first one's line; equal keys in different objects
    (and a key-like string in a value) are not duplicates."""
    path = tmp_path / "twice.json"
    path.write_text('{"batch_size": 8,\n "model": "all-minilm-l6",\n "batch_size": 64}\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (f"{path}:3: cannot parse (the key 'batch_size' is written twice (also at line 1); "
                              "JSON would keep the last one silently)")
    path.write_text('{"method": "esimcse",\n "esimcse": {"queue_size": 32,\n  "queue_size": 64}}\n')
    with pytest.raises(ConfigError, match=r"twice\.json:3: cannot parse \(the key 'queue_size' is written twice "
                                          r"\(also at line 2\)"):
        load_config(path)
    fine = tmp_path / "fine.json"
    fine.write_text('{"method": "esimcse", "run_name": "{\\"esimcse\\": 1",\n "esimcse": {"queue_size": 64}}\n')
    cfg = load_config(fine)
    assert cfg.run_name == '{"esimcse": 1' and cfg.method_params["esimcse"].queue_size == 64


def test_a_number_as_a_key_is_an_unknown_key_not_a_type_error(tmp_path):
    path = tmp_path / "number.yaml"
    path.write_text("1: x\n")
    with pytest.raises(ConfigError, match=rf"^{path}: unknown key 1; valid keys: adam_beta1, "):
        load_config(path)
    with pytest.raises(ConfigError, match=r"^esimcse: unknown key 2; valid keys: "):
        parse_mapping({"method": "esimcse", "esimcse": {2: 3}})


def test_a_study_grid_of_a_million_runs_is_refused_before_it_is_expanded(tmp_path):
    import yaml

    study = tmp_path / "big.yaml"
    grid = {"lr": [1e-5 * i for i in range(1, 101)], "batch_size": list(range(2, 102)), "seed": list(range(100))}
    study.write_text(yaml.safe_dump({"name": "big", "profiles": {"cpu": {"max_steps": 2}},
                                     "runs": [{"label": "a", "config": "quickstart", "seeds": [1, 2]},
                                              {"label": "x", "config": "quickstart", "grid": grid}]}))
    with pytest.raises(StudyError) as err:
        load_study(study, runs_root=tmp_path / "runs", notebooks=False)
    assert str(err.value) == (f"{study}:11: run 'x': its grid and seeds make 1,000,000 runs, and a study has at most "
                              "5,000 (2 before this group); shorten the lists")
