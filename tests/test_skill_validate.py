"""`npu-graph skill validate`: catches what the Agent Skills spec, skills-ref and Anthropic's packager
reject, across a whole tree; a valid bundle passes ours and the official validator."""
from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

from npu_graph_skill.skill.install import install_tree
from npu_graph_skill.skill.validate import validate_tree
from skill_fakes import fake_bundle

GOOD = "---\nname: {name}\ndescription: Diagnoses graph capture failures. Used when NPUGraph capture fails.\n---\n\n# Body\n"


def make_skill(root: pathlib.Path, folder: str, text: str, filename: str = "SKILL.md") -> pathlib.Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / filename).write_text(text, encoding="utf-8")
    return path


def errors(report) -> list:
    return [i.message for i in report.issues if i.severity == "error"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("skills")
    install_tree(fake_bundle().files, str(root / "npu-graph-skill"))
    return root


def test_the_rendered_bundle_is_valid(installed):
    report = validate_tree(str(installed))
    assert report.ok, errors(report)
    assert len(report.skills) == 6 and not report.issues


def test_the_official_validator_accepts_every_skill_of_the_bundle(installed):
    skills_ref = pytest.importorskip("skills_ref", reason="skills-ref needs Python >= 3.11: pip install skills-ref")
    folders = [installed / "npu-graph-skill"] + sorted(p for p in (installed / "npu-graph-skill").iterdir()
                                                        if (p / "SKILL.md").is_file())
    assert len(folders) == 6
    for folder in folders:
        assert skills_ref.validate(folder) == [], folder.name
    assert validate_tree(str(installed), official=True).official == "passed"


@pytest.mark.parametrize("text, expected", [
    ("---\nname: demo\ndescription: Diagnoses things.\nversion: 1\n---\nbody\n", "unexpected frontmatter key(s) version"),
    ("---\nname: demo\ndescription: Use when: capture fails\n---\nbody\n", "invalid YAML in frontmatter"),
    ("---\nname: Demo\ndescription: Diagnoses things.\n---\nbody\n", "must be lower-case letters"),
    ("---\nname: other-name\ndescription: Diagnoses things.\n---\nbody\n", "must equal its folder name"),
    ("---\nname: demo\ndescription: Diagnoses <graph> things.\n---\nbody\n", "must not contain '<' or '>'"),
    ("---\nname: demo\ndescription: " + "x" * 1025 + "\n---\nbody\n", "at most 1024"),
    ("---\nname: demo\n---\nbody\n", "description is required"),
    ("---\nname: demo\ndescription: Diagnoses things.\n---\n", "body after the frontmatter is empty"),
    ("# no frontmatter\n", "no YAML frontmatter"),
    ("---\nname: demo\ndescription: Diagnoses things.\nmetadata:\n  version: 1.0\n---\nbody\n", "keys and values must be strings"),
    ("---\nname: demo\ndescription: Diagnoses things.\nmetadata: {a: b}\n---\nbody\n", "flow-style value"),
    ("---\nname: demo\nname: demo\ndescription: Diagnoses things.\n---\nbody\n", "duplicate key 'name'"),
])
def test_each_spec_violation_is_reported(tmp_path, text, expected):
    make_skill(tmp_path, "demo", text)
    report = validate_tree(str(tmp_path))
    assert not report.ok
    assert any(expected in message for message in errors(report)), errors(report)


@pytest.mark.parametrize("name, expected", [
    ("my--skill", "single hyphens"), ("-skill", "single hyphens"), ("claude-helper", "reserved word 'claude'"),
    ("a" * 65, "at most 64"),
])
def test_name_rules(tmp_path, name, expected):
    make_skill(tmp_path, name, GOOD.format(name=name))
    assert any(expected in message for message in errors(validate_tree(str(tmp_path))))


def test_the_file_must_be_named_skill_md_in_capitals(tmp_path):
    make_skill(tmp_path, "demo", GOOD.format(name="demo"), filename="skill.md")
    assert any("named SKILL.md exactly" in m for m in errors(validate_tree(str(tmp_path))))


def test_names_must_be_unique_across_the_tree(tmp_path):
    make_skill(tmp_path, "a/demo", GOOD.format(name="demo"))
    make_skill(tmp_path, "b/demo", GOOD.format(name="demo"))
    assert any("used 2 times" in m for m in errors(validate_tree(str(tmp_path))))


def test_broken_relative_links_are_reported_and_code_blocks_ignored(tmp_path):
    text = GOOD.format(name="demo") + "[ok](SKILL.md) [gone](references/missing.md) [web](https://x.org)\n```\n[x](nope.md)\n```\n"
    make_skill(tmp_path, "demo", text)
    found = errors(validate_tree(str(tmp_path)))
    assert found == ["link target does not exist: references/missing.md"]


def test_warnings_do_not_fail_validation(tmp_path):
    make_skill(tmp_path, "demo", "---\nname: demo\ndescription: I fix graph problems.\n---\nbody\n")
    report = validate_tree(str(tmp_path))
    assert report.ok and any("third person" in i.message for i in report.issues)


def test_cli_exit_codes_and_json(run_cli, installed, tmp_path):
    code, out, _ = run_cli("skill", "validate", str(installed), "--lang", "en")
    assert code == 0 and "valid: 6 skills" in out
    make_skill(tmp_path, "demo", "---\nname: wrong\ndescription: Diagnoses things.\n---\nbody\n")
    code, out, _ = run_cli("skill", "validate", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and data["issues"][0]["severity"] == "error"
    code, _, err = run_cli("skill", "validate", str(tmp_path / "absent"))
    assert code == 2 and "no such file" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli("skill", "validate", str(empty))
    assert code == 2 and "no SKILL.md found" in err


def test_a_binary_skill_md_is_an_error_not_a_crash(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"\xff\xfe\x00\x01binary")
    assert errors(validate_tree(str(tmp_path))) == ["not valid UTF-8"]


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_skill_md_is_an_error_not_a_crash(tmp_path):
    path = make_skill(tmp_path, "demo", GOOD.format(name="demo")) / "SKILL.md"
    path.chmod(0)
    assert any("cannot read" in m for m in errors(validate_tree(str(tmp_path))))


def test_crlf_line_endings_are_accepted(tmp_path):
    make_skill(tmp_path, "demo", GOOD.format(name="demo").replace("\n", "\r\n"))
    assert validate_tree(str(tmp_path)).ok


def test_a_gb18030_skill_md_is_reported_as_not_utf8(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(("---\nname: demo\ndescription: 诊断图模式问题。\n---\n正文\n").encode("gb18030"))
    assert errors(validate_tree(str(tmp_path))) == ["not valid UTF-8"]


def test_a_single_skill_md_path_validates_its_folder(installed):
    report = validate_tree(str(installed / "npu-graph-skill" / "graph-mode-expert" / "SKILL.md"))
    assert report.ok and [s.name for s in report.skills] == ["graph-mode-expert"]
