"""The case knowledge base as a user meets it: record (new, repeat, novel), history.md, stats,
list, show, search, similar cases for the diagnosis, export, rebuild, and where the KB lives."""
from __future__ import annotations

import copy
import json
import os
import pathlib
import zipfile

import pytest
import yaml

from npu_graph_skill.cases.case import validate
from npu_graph_skill.cases.catalogue import load_catalogue
from npu_graph_skill.cases.history import history_is_current
from npu_graph_skill.cases.location import resolve_kb_dir
from npu_graph_skill.cases.redact import Redactor
from npu_graph_skill.cases.store import case_stats, get_case, list_cases, rebuild, record_case, search_cases, similar_cases

DATA = pathlib.Path(__file__).parent / "data" / "cases"


def report(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


MEMCPY = "report-capture-memcpy.json"
NOVEL = "report-novel-default-stream.json"


def record(kb, name=MEMCPY, **options):
    data = report(name) if isinstance(name, str) else name
    return record_case(data, kb_dir=str(kb), redactor=Redactor(), **options)


def test_new_case_file_has_the_template_fields(tmp_path):
    result = record(tmp_path, tags=["vllm"], reporter="team-a", verification_result="passed")
    assert result.action == "created" and result.occurrences == 1
    data = yaml.safe_load(pathlib.Path(result.path).read_text(encoding="utf-8"))
    assert validate(data) == []
    assert data["id"] == result.case_id and result.path.endswith(f"cases/{result.case_id}.yaml")
    assert data["pattern"] == "P-CAP-002" and data["phase"] == "capture"
    # layer located to function and file:line (the deepest drill-down step)
    assert data["layer"] == {"detected": "L2", "root": "L1", "function": "copy_between_host_and_device_opapi",
                             "file": "torch_npu/csrc/aten/ops/op_api/CopyKernelOpApi.cpp", "line": 55}
    assert data["error"] == report(MEMCPY)["error"]  # verbatim
    assert data["environment"]["cann"] == "8.2.RC1" and data["environment"]["device"] == "Atlas 300I Duo (310P)"
    assert data["verification"]["result"] == "passed" and data["reporter"] == "team-a"
    assert "vllm" in data["tags"] and "107030" in data["codes"]
    assert data["fix"]["short_term"].startswith("Move the host/device copy")


def test_repeat_increments_occurrences_and_appends_environment(tmp_path):
    first = record(tmp_path)
    again = report(MEMCPY)
    # the same failure from another worker, pid, time, path and line; another CANN
    again["error"] = again["error"].replace("Worker_TP0 pid=496", "Worker_TP3 pid=8812").replace(
        "../torch_npu", "/opt/site-packages/torch_npu").replace(":55 ", ":61 ").replace("06:46:08", "17:02:44")
    again["evidence_summary"]["versions"]["cann"] = "8.3.RC1"
    second = record(tmp_path, again)
    assert second.action == "repeat" and second.case_id == first.case_id and second.occurrences == 2
    assert len(os.listdir(tmp_path / "cases")) == 1
    view = get_case(first.case_id, kb_dir=str(tmp_path))
    assert view.occurrences == 2 and view.seen[0]["environment"]["cann"] == "8.3.RC1"
    stats = case_stats(kb_dir=str(tmp_path))
    assert (stats.cases, stats.occurrences) == (1, 2)


def test_novel_case_writes_a_pattern_proposal_with_derived_matchers(tmp_path):
    import re

    result = record(tmp_path, NOVEL, symptom=(DATA / "symptom-default-stream.txt").read_text(encoding="utf-8"))
    assert result.pattern == "NEW" and result.proposal
    assert os.path.basename(result.proposal).startswith("P-CAP-NEW-")
    [pattern] = yaml.safe_load(pathlib.Path(result.proposal).read_text(encoding="utf-8"))
    assert pattern["phase"] == "capture" and pattern["layer"] == "L2" and pattern["root_layer"] == "L1"
    assert pattern["title"]["zh"] and pattern["title"]["en"].startswith("TODO")  # the other language to fill
    message = next(m for m in pattern["matchers"] if m["type"] == "message")
    assert re.search(message["regex"], report(NOVEL)["error"])
    assert {"type": "frame", "regex": "capture_begin", "weight": 0.1} in pattern["matchers"]
    assert pattern["examples"][0]["source"] == f"npu-graph kb case {result.case_id}"
    steps = " ".join(step["en"] for step in result.promote)
    assert "knowledge/patterns/capture.yaml" in steps and "pytest" in steps
    # the symptom is quoted verbatim, minus what identifies people
    case = yaml.safe_load(pathlib.Path(result.path).read_text(encoding="utf-8"))
    assert "g.capture_begin()" in case["symptom"] and "LucciC" not in case["symptom"] and "hf_" not in case["symptom"]
    assert result.redactions["home_path"] >= 1 and result.redactions["token"] == 1


def test_history_md_counts_and_fingerprint(tmp_path):
    record(tmp_path)
    record(tmp_path)
    record(tmp_path, NOVEL)
    history = (tmp_path / "history.md").read_text(encoding="utf-8")
    assert "**2** 个案例 cases · **3** 次记录 occurrences" in history
    assert "| capture 捕获阶段 | 2 | 3 |" in history
    assert "| P-CAP-002 | 1 | 2 |" in history and "| NEW | 1 | 1 |" in history
    assert "Generated by `npu-graph kb`" in history and "请勿手工编辑" in history
    assert history_is_current(history, load_catalogue(resolve_kb_dir(str(tmp_path))))
    assert (tmp_path / "CASE_TEMPLATE.md").read_text(encoding="utf-8").startswith("<!-- Generated")
    assert "history.md merge=union" in (tmp_path / ".gitattributes").read_text()
    assert ".lock" in (tmp_path / ".gitignore").read_text()


def test_merged_branches_count_once_and_rebuild_repairs_history(tmp_path):
    """Two people recorded the same failure on their own branches; git merged both files and
    union-merged history.md. The signature makes them one case; rebuild regenerates history.md."""
    first = record(tmp_path)
    (tmp_path / "history.md").write_text((tmp_path / "history.md").read_text() * 2)  # what a union merge leaves
    other = tmp_path / "other"
    second = record(other)
    os.replace(second.path, tmp_path / "cases" / os.path.basename(second.path))
    stats = case_stats(kb_dir=str(tmp_path))
    assert (stats.cases, stats.occurrences) == (1, 2)
    assert not stats.history_current and any("kb rebuild" in n for n in stats.notes)
    stats = rebuild(kb_dir=str(tmp_path))
    assert stats.history_current
    assert get_case(second.case_id, kb_dir=str(tmp_path)).duplicates == [first.case_id]


def test_list_filters_and_show_by_prefix(tmp_path):
    memcpy = record(tmp_path)
    record(tmp_path, NOVEL)
    listed = list_cases(kb_dir=str(tmp_path))
    assert listed.total == 2 and {c.pattern for c in listed.cases} == {"P-CAP-002", "NEW"}
    assert [c.id for c in list_cases(kb_dir=str(tmp_path), pattern="p-cap-002").cases] == [memcpy.case_id]
    assert list_cases(kb_dir=str(tmp_path), phase="replay").cases == []
    assert [c.id for c in list_cases(kb_dir=str(tmp_path), tag="107030").cases] == [memcpy.case_id]
    assert get_case(memcpy.case_id[:15], kb_dir=str(tmp_path)).case["id"] == memcpy.case_id


def test_search_by_words_codes_and_chinese(tmp_path):
    memcpy = record(tmp_path)
    novel = record(tmp_path, NOVEL)
    hits = search_cases("aclrtMemcpy 107030 during capture", kb_dir=str(tmp_path))
    assert hits[0].case_id == memcpy.case_id and hits[0].fix.startswith("Move the host/device copy")
    assert any("107030" in r for r in hits[0].reasons)
    assert search_cases("默认流上捕获报错", kb_dir=str(tmp_path))[0].case_id == novel.case_id
    assert search_cases("P-CAP-002", kb_dir=str(tmp_path))[0].case_id == memcpy.case_id
    assert search_cases("completely unrelated tokenizer question", kb_dir=str(tmp_path)) == []


def test_similar_cases_feed_the_diagnosis(tmp_path):
    recorded = record(tmp_path)
    record(tmp_path, NOVEL)
    # the same failure in another run: same signature
    same = report(MEMCPY)
    same["error"] = same["error"].replace("pid=496", "pid=1").replace(":55 ", ":57 ")
    [best] = similar_cases(same, kb_dir=str(tmp_path), limit=1)
    assert best.case_id == recorded.case_id and best.score == 1.0 and best.fix
    candidate = best.to_candidate()
    assert candidate.kind == "case" and candidate.id == recorded.case_id and candidate.evidence
    # another pattern, same code and a close message: shown, below an exact repeat
    close = copy.deepcopy(report(MEMCPY))
    close["candidates"][0]["id"] = "P-CAP-009"
    close["error"] = "RuntimeError: copy_between_host_and_device_opapi: NPU function error: aclrtMemcpy, error code is 107030"
    hits = similar_cases(close, kb_dir=str(tmp_path))
    assert hits and hits[0].case_id == recorded.case_id and 0.3 <= hits[0].score < 1.0
    # the whole pasted text instead of the decisive line, no pattern yet: found by its message
    novel = record(tmp_path / "kb2", NOVEL)
    text = (DATA / "symptom-default-stream.txt").read_text(encoding="utf-8")
    hits = similar_cases({"phase": "capture", "error": text}, kb_dir=str(tmp_path / "kb2"))
    assert [h.case_id for h in hits] == [novel.case_id] and hits[0].score >= 0.9
    # an unrelated error: nothing
    other = {"error": "ImportError: libhccl.so: cannot open shared object file", "phase": "environment",
             "candidates": [{"id": "P-ENV-001", "kind": "pattern"}], "evidence_summary": {}}
    assert similar_cases(other, kb_dir=str(tmp_path)) == []


def test_reading_a_missing_or_empty_kb_is_silent(tmp_path):
    missing = tmp_path / "nowhere"
    assert search_cases("anything", kb_dir=str(missing)) == []
    assert similar_cases(report(MEMCPY), kb_dir=str(missing)) == []
    assert list_cases(kb_dir=str(missing)).cases == []
    assert case_stats(kb_dir=str(missing)).cases == 0
    assert not missing.exists()  # reading never creates the folder


def test_a_broken_case_file_is_skipped_with_a_note(tmp_path):
    record(tmp_path)
    (tmp_path / "cases" / "C-20250101-deadbeef.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    listed = list_cases(kb_dir=str(tmp_path))
    assert listed.total == 1 and any("C-20250101-deadbeef.yaml" in n for n in listed.notes)
    assert search_cases("aclrtMemcpy", kb_dir=str(tmp_path))


def test_export_json_yaml_zip(tmp_path):
    from npu_graph_skill.cases.store import export_cases

    kb = tmp_path / "kb"
    record(kb)
    record(kb)
    record(kb, NOVEL)
    out = export_cases(str(tmp_path / "all.json"), kb_dir=str(kb))
    data = json.loads((tmp_path / "all.json").read_text(encoding="utf-8"))
    assert (out.cases, out.occurrences) == (2, 3) and data["cases_count"] == 2 and data["occurrences"] == 3
    assert sorted(c["occurrences"] for c in data["cases"]) == [1, 2]
    export_cases(str(tmp_path / "all.yaml"), kb_dir=str(kb))
    assert yaml.safe_load((tmp_path / "all.yaml").read_text(encoding="utf-8"))["cases_count"] == 2
    export_cases(str(tmp_path / "kb.zip"), kb_dir=str(kb))
    names = zipfile.ZipFile(tmp_path / "kb.zip").namelist()
    assert "kb/history.md" in names and sum(n.startswith("kb/cases/") for n in names) == 2
    assert not any(n.endswith((".lock", ".index.json")) for n in names)


def test_kb_location_order(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    skill = project / ".trae" / "skills" / "npu-graph-skill"
    skill.mkdir(parents=True)
    nested = project / "src" / "pkg"
    nested.mkdir(parents=True)
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert resolve_kb_dir(None, cwd=str(nested), environ=env).path == str(skill / "knowledge")
    assert resolve_kb_dir(None, cwd=str(nested), environ={**env, "NPU_GRAPH_KB": str(tmp_path / "e")}).source == "env"
    assert resolve_kb_dir(str(tmp_path / "o"), cwd=str(nested), environ={"NPU_GRAPH_KB": "x"}).path == str(tmp_path / "o")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / ".git").mkdir()
    user = resolve_kb_dir(None, cwd=str(outside), environ=env)
    assert (user.source, user.path) == ("user", str(tmp_path / "xdg" / "npu-graph-skill" / "kb"))


def test_interrupted_write_leaves_neither_case_nor_temp(tmp_path, monkeypatch):
    """Ctrl-C (or any error) between the temp write and the rename."""
    import npu_graph_skill.core.files as files

    record(tmp_path)  # the knowledge base exists
    real_replace = os.replace

    def interrupted(src, dst):
        if "/cases/" in str(dst):
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        record(tmp_path, NOVEL)
    monkeypatch.undo()
    assert len(os.listdir(tmp_path / "cases")) == 1  # the first case only: no new file, no temp file
    assert case_stats(kb_dir=str(tmp_path)).cases == 1


def test_proposal_is_a_pattern_in_the_knowledge_format(tmp_path):
    """Once given a real id, the proposal parses with the knowledge schema (its TODO texts are
    for a person to fill; the structure, matchers, anchors and example are already right)."""
    schema = pytest.importorskip("npu_graph_skill.knowledge.schema")
    result = record(tmp_path, NOVEL)
    [proposal] = yaml.safe_load(pathlib.Path(result.proposal).read_text(encoding="utf-8"))
    proposal["id"] = "P-CAP-999"
    pattern = schema.parse_pattern(proposal, "proposal")
    assert pattern.anchors[0]["path"] == "torch_npu/csrc/core/npu/NPUGraph.cpp"
    message = next(m for m in pattern.matchers if m.type == "message")
    assert message.pattern().search(report(NOVEL)["error"])


def test_env_option_takes_versions_from_the_doctor(tmp_path, monkeypatch):
    import sys
    import types

    fake = types.ModuleType("npu_graph_skill.doctor.envinfo")
    fake.collect_env = lambda **_: {"python": "3.11.7 (CPython, aarch64)", "torch": "2.5.1", "torch_npu": "2.5.1.post1",
                                    "cann": "8.2.RC1", "driver": "24.1.0", "devices": ["NPU 0: 910B3 health=OK"],
                                    "torch_cuda": None}
    monkeypatch.setitem(sys.modules, "npu_graph_skill.doctor.envinfo", fake)
    data = report(MEMCPY)
    data["evidence_summary"]["versions"] = {}
    result = record(tmp_path, data, collect_env=True)
    env = result.case["environment"]
    assert env["cann"] == "8.2.RC1" and env["driver"] == "24.1.0" and env["device"] == "NPU 0: 910B3 health=OK"
    # without the doctor the record still goes through, and says why the environment is missing
    monkeypatch.setitem(sys.modules, "npu_graph_skill.doctor.envinfo", None)
    result = record(tmp_path / "other", data, collect_env=True)
    assert result.action == "created" and any("environment not collected" in n for n in result.notes)


def test_a_recorded_case_is_a_candidate_of_the_diagnosis(tmp_path):
    """Through the diagnosis engine, once it exists: a recorded case shows up among the candidates
    (kind "case") for a similar error."""
    engine = pytest.importorskip("npu_graph_skill.diagnose.engine", reason="the diagnosis engine is not there yet")
    text = (DATA / "symptom-default-stream.txt").read_text(encoding="utf-8")
    first = engine.diagnose(text=text, kb_dir=str(tmp_path))
    recorded = record_case(first.to_dict(), kb_dir=str(tmp_path), symptom=text, redactor=Redactor())
    again = engine.diagnose(text=text.replace("line 26", "line 31"), kb_dir=str(tmp_path))
    cases = [c for c in again.candidates if c.kind == "case"]
    assert recorded.case_id in [c.id for c in cases]


def test_record_case_options_for_api_callers(tmp_path):
    from npu_graph_skill.core.errors import UserError

    preview = record(tmp_path, dry_run=True, yes=True)
    assert preview.action == "preview" and preview.case["pattern"] == "P-CAP-002" and not tmp_path.joinpath("cases").exists()
    with pytest.raises(UserError, match="unknown option"):
        record(tmp_path, colour="red")
