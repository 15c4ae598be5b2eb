"""The bundle rendered from the knowledge data the package ships: in step with `npu-graph patterns`,
with every constraint, concept and decisive code, and valid for our validator and the official one."""
from __future__ import annotations

import json
import re

import pytest

from npu_graph_skill.core.errors import UserError
from npu_graph_skill.skill.bundle import load_sources, render_bundle
from npu_graph_skill.skill.install import install_tree
from npu_graph_skill.skill.markdown import as_dict
from npu_graph_skill.skill.references import pattern_codes
from npu_graph_skill.skill.validate import validate_tree

DIAG = "graph-mode-diagnostics/references/"


@pytest.fixture(scope="module")
def sources():
    try:
        return load_sources()
    except UserError as exc:
        pytest.skip(f"the shipped knowledge does not load yet: {exc}")


@pytest.fixture(scope="module")
def bundle(sources):
    return render_bundle(sources)


def test_the_references_list_every_pattern_that_npu_graph_patterns_reports(run_cli, bundle):
    code, out, err = run_cli("patterns", "--json")
    assert code == 0, err
    reported = [p["id"] for p in json.loads(out)["patterns"]]
    assert reported
    catalogue = bundle.text(DIAG + "known-patterns.md")
    listed = re.findall(r"^\| \[(P-[A-Z]+-\d+)\]\(known-patterns/", catalogue, flags=re.MULTILINE)
    assert sorted(listed) == sorted(reported)
    for pattern in json.loads(out)["patterns"]:
        details = bundle.text(f"{DIAG}known-patterns/{pattern['phase']}.md")
        section = details.split(f"### {pattern['id']}\n", 1)[1].split("\n### ", 1)[0]
        assert f"**阶段 Phase**: {pattern['phase']}" in section
        assert "**特征 Signature**" in section and "**修复 Fix**" in section


def test_every_constraint_and_concept_is_rendered(sources, bundle):
    constraints = bundle.text(DIAG + "constraints.md")
    for item in sources.constraints:
        assert f"## {as_dict(item)['id']} · " in constraints
    paths = {f.path for f in bundle.files}
    for note in sources.concepts:
        assert f"graph-mode-expert/references/concepts/{note.id}.md" in paths


def test_every_code_a_pattern_matches_on_is_in_the_error_code_map(sources, bundle):
    codes = bundle.text(DIAG + "error-code-map.md")
    for code in pattern_codes(sources.patterns):
        assert f"`{code}`" in codes, code


def test_the_rendered_bundle_passes_both_validators(tmp_path, bundle):
    install_tree(bundle.files, str(tmp_path / "npu-graph-skill"))
    report = validate_tree(str(tmp_path), official=True)
    assert report.ok, [f"{i.path}: {i.message}" for i in report.issues if i.severity == "error"]
    assert report.official in ("passed", "unavailable: pip install skills-ref (needs Python 3.11+)")


def test_a_pattern_page_links_the_public_reports_that_concluded_it(sources, bundle):
    reports = sources.public_reports["P-UPD-020"]
    page = bundle.file(DIAG + "known-patterns/update.md").data.decode("utf-8")
    section = page[page.index("### P-UPD-020"):]
    section = section[:section.index("\n### ")] if "\n### " in section else section
    assert f"[{reports[0]['id']}]({reports[0]['url']})" in section
    assert f"(+{len(reports) - 3})" in section  # the rest are counted, not listed
