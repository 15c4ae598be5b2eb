"""`npu-graph skill install`: each agent's folder, user content kept, generated content updated,
--force limited to generated files, atomic writes, clear errors."""
from __future__ import annotations

import json
import os

import pytest

from npu_graph_skill.skill import bundle as bundle_module
from npu_graph_skill.skill.bundle import Bundle, BundleFile
from npu_graph_skill.skill.install import MANIFEST, install_skill, install_tree
from npu_graph_skill.skill.routing import SUB_SKILLS
from npu_graph_skill.skill.validate import validate_tree
from skill_fakes import fake_bundle, fake_sources

PROJECT_DIRS = {"claude": ".claude/skills", "trae": ".trae/skills", "codex": ".agents/skills",
                "cursor": ".cursor/skills", "opencode": ".opencode/skills"}


@pytest.fixture(scope="module")
def bundle():
    return fake_bundle()


@pytest.fixture(autouse=True)
def fake_knowledge(monkeypatch):
    """The CLI renders the bundle itself: give it the small knowledge set."""
    monkeypatch.setattr(bundle_module, "load_sources", fake_sources)


@pytest.mark.parametrize("agent", sorted(PROJECT_DIRS))
def test_install_into_a_fresh_project_gives_a_valid_tree_for_each_agent(tmp_path, bundle, agent):
    report = install_skill(agent=[agent], project=str(tmp_path), bundle=bundle)
    skill = tmp_path / PROJECT_DIRS[agent] / "npu-graph-skill"
    assert report.targets[0].path == str(skill)
    assert (skill / "SKILL.md").is_file()
    assert sorted(p.name for p in skill.iterdir() if (p / "SKILL.md").is_file()) == sorted(SUB_SKILLS)
    result = validate_tree(str(skill.parent))
    assert result.ok, [i.message for i in result.issues]
    skills_ref = pytest.importorskip("skills_ref", reason="skills-ref needs Python >= 3.11: pip install skills-ref")
    for folder in [skill] + [skill / name for name in SUB_SKILLS]:
        assert skills_ref.validate(folder) == [], folder


def test_user_scope_goes_under_the_home_folder(tmp_path, bundle):
    install_skill(agent=["claude", "opencode"], scope="user", bundle=bundle, home=str(tmp_path))
    assert (tmp_path / ".claude/skills/npu-graph-skill/SKILL.md").is_file()
    assert (tmp_path / ".config/opencode/skills/npu-graph-skill/SKILL.md").is_file()


def test_reinstall_keeps_the_users_cases_and_edits_and_updates_the_rest(tmp_path, bundle):
    skill = tmp_path / "npu-graph-skill"
    install_tree(bundle.files, str(skill))
    history = skill / "knowledge/history.md"
    history.write_text("# my team's cases\n", encoding="utf-8")
    case = skill / "knowledge/cases/C-20260101-abcd.yaml"
    case.parent.mkdir(parents=True)
    case.write_text("id: C-20260101-abcd\n", encoding="utf-8")
    edited = skill / "graph-log-analyzer/SKILL.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "\nOur own note.\n", encoding="utf-8")

    newer = Bundle([BundleFile(f.path, f.data + (b"\n<!-- v2 -->\n" if f.path.endswith(".md") else b""), f.owner)
                    for f in bundle.files], [])
    report = install_tree(newer.files, str(skill))
    assert "knowledge/history.md" in report.kept and history.read_text(encoding="utf-8") == "# my team's cases\n"
    assert case.read_text(encoding="utf-8") == "id: C-20260101-abcd\n"
    assert "graph-log-analyzer/SKILL.md" in report.kept and "Our own note." in edited.read_text(encoding="utf-8")
    assert "SKILL.md" in report.updated and (skill / "SKILL.md").read_text(encoding="utf-8").endswith("<!-- v2 -->\n")

    again = install_tree(newer.files, str(skill))
    assert "graph-log-analyzer/SKILL.md" in again.kept  # still the user's until --force

    forced = install_tree(newer.files, str(skill), force=True)
    assert forced.overwritten == ["graph-log-analyzer/SKILL.md"]
    assert "Our own note." not in edited.read_text(encoding="utf-8")
    assert history.read_text(encoding="utf-8") == "# my team's cases\n" and case.exists()


def test_files_an_older_version_generated_are_removed_unless_edited(tmp_path, bundle):
    skill = tmp_path / "npu-graph-skill"
    old = bundle.files + [BundleFile("graph-mode-expert/references/old.md", b"old\n"),
                          BundleFile("graph-mode-expert/references/old-edited.md", b"old\n")]
    install_tree(old, str(skill))
    (skill / "graph-mode-expert/references/old-edited.md").write_text("mine\n", encoding="utf-8")
    report = install_tree(bundle.files, str(skill))
    assert report.removed == ["graph-mode-expert/references/old.md"]
    assert not (skill / "graph-mode-expert/references/old.md").exists()
    assert (skill / "graph-mode-expert/references/old-edited.md").read_text(encoding="utf-8") == "mine\n"


def test_a_copy_without_manifest_is_never_overwritten_silently(tmp_path, bundle):
    skill = tmp_path / "npu-graph-skill"
    install_tree(bundle.files, str(skill))
    (skill / MANIFEST).unlink()
    (skill / "SKILL.md").write_text("hand-copied older version\n", encoding="utf-8")
    report = install_tree(bundle.files, str(skill))
    assert "SKILL.md" in report.kept
    assert (skill / "SKILL.md").read_text(encoding="utf-8") == "hand-copied older version\n"


def test_install_leaves_no_temporary_files_and_writes_a_manifest(tmp_path, bundle):
    skill = tmp_path / "npu-graph-skill"
    install_tree(bundle.files, str(skill))
    leftovers = [p for p in skill.rglob(".tmp-*")]
    assert leftovers == []
    manifest = json.loads((skill / MANIFEST).read_text(encoding="utf-8"))
    assert "SKILL.md" in manifest["files"] and "knowledge/history.md" not in manifest["files"]


def test_an_interrupted_write_keeps_the_old_file_whole(tmp_path, bundle, monkeypatch):
    skill = tmp_path / "npu-graph-skill"
    install_tree(bundle.files, str(skill))
    before = (skill / "SKILL.md").read_bytes()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    newer = [BundleFile(f.path, f.data + b"x", f.owner) for f in bundle.files]
    with pytest.raises(KeyboardInterrupt):
        install_tree(newer, str(skill))
    monkeypatch.undo()
    assert (skill / "SKILL.md").read_bytes() == before
    assert [p for p in skill.rglob(".tmp-*")] == []


def test_cli_install_reports_and_second_run_changes_nothing(run_cli, tmp_path):
    code, out, err = run_cli("skill", "install", "--project", str(tmp_path), "--lang", "en")
    assert code == 0 and "added" in out and err == ""
    code, out, _ = run_cli("skill", "install", "--project", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and data["targets"][0]["added"] == [] and data["targets"][0]["updated"] == []
    assert data["targets"][0]["unchanged"]


def test_cli_install_into_a_custom_folder_and_all_agents(run_cli, tmp_path):
    code, _, _ = run_cli("skill", "install", "--dir", str(tmp_path / "skills"))
    assert code == 0 and (tmp_path / "skills/npu-graph-skill/SKILL.md").is_file()
    code, out, _ = run_cli("skill", "install", "--agent", "all", "--project", str(tmp_path), "--json")
    assert code == 0 and [t["agent"] for t in json.loads(out)["targets"]] == ["claude", "trae", "codex", "cursor", "opencode"]


@pytest.mark.parametrize("args, message", [
    (["--agent", "vim"], "unknown agent 'vim'"),
    (["--project", "/nonexistent/project"], "the project folder does not exist"),
])
def test_cli_install_bad_usage_is_one_line_and_exit_2(run_cli, tmp_path, args, message):
    code, out, err = run_cli("skill", "install", *args)
    assert code == 2 and message in err and "Traceback" not in err


def test_cli_install_where_a_file_blocks_the_folder(run_cli, tmp_path):
    (tmp_path / ".claude").write_text("not a folder", encoding="utf-8")
    code, _, err = run_cli("skill", "install", "--project", str(tmp_path))
    assert code == 2 and err.startswith("npu-graph: error:") and err.count("\n") == 1


def test_skill_without_subcommand_prints_usage(run_cli):
    code, _, err = run_cli("skill")
    assert code == 2 and "install" in err
