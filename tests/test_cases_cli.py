"""`npu-graph kb ...` as a user runs it: output, exit codes, files written; bad input gets one line
and exit 2, never a traceback, never a file."""
from __future__ import annotations

import gzip
import io
import json
import os
import pathlib
import sys

import pytest

DATA = pathlib.Path(__file__).parent / "data" / "cases"
MEMCPY = str(DATA / "report-capture-memcpy.json")
NOVEL = str(DATA / "report-novel-default-stream.json")
SYMPTOM = str(DATA / "symptom-default-stream.txt")


@pytest.fixture
def kb(tmp_path, monkeypatch):
    path = tmp_path / "kb"
    monkeypatch.setenv("NPU_GRAPH_KB", str(path))
    monkeypatch.delenv("VISUAL", raising=False)
    return path


def _files(path: pathlib.Path) -> list:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()) if path.exists() else []


def test_record_yes_json_then_stats(kb, run_cli):
    code, out, err = run_cli("kb", "record", MEMCPY, "--yes", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["action"] == "created" and result["pattern"] == "P-CAP-002" and result["cases"] == 1
    code, out, _ = run_cli("kb", "record", MEMCPY, "--yes", "--json")
    assert json.loads(out)["action"] == "repeat" and json.loads(out)["occurrences"] == 2
    code, out, _ = run_cli("kb", "stats", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["cases"] == 1 and stats["occurrences"] == 2
    assert stats["by_phase"] == {"capture": {"cases": 1, "occurrences": 2}}


def test_record_text_output_in_both_languages(kb, run_cli):
    code, out, _ = run_cli("kb", "record", NOVEL, "--symptom", SYMPTOM, "--yes", "--lang", "en")
    assert code == 0
    assert "Recorded new case C-" in out and "Pattern proposal:" in out and "To promote it:" in out
    assert "Redacted:" in out and "--no-redact" in out
    code, out, _ = run_cli("kb", "record", NOVEL, "--symptom", SYMPTOM, "--yes", "--lang", "zh")
    assert "此前已记录" in out and "2 次记录" in out


def test_no_redact_keeps_the_text(kb, run_cli):
    code, out, _ = run_cli("kb", "record", NOVEL, "--symptom", SYMPTOM, "--yes", "--no-redact", "--json")
    case = json.loads(out)["case"]
    assert "/home/LucciC/test.py" in case["symptom"] and json.loads(out)["redactions"] == {}


def test_without_yes_and_without_terminal_nothing_is_written(kb, run_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, _, err = run_cli("kb", "record", MEMCPY)
    assert code == 2 and "--yes" in err and "Traceback" not in err
    assert _files(kb) == []


def test_terminal_prompt_yes_and_no(kb, run_cli, monkeypatch):
    import npu_graph_skill.cases.cli as kb_cli

    monkeypatch.setattr(kb_cli, "can_ask", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    code, out, err = run_cli("kb", "record", MEMCPY, "--lang", "en")
    assert code == 0 and "[Y/n]" in err and "Not recorded." in err and _files(kb) == []
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))  # Enter = yes
    code, out, err = run_cli("kb", "record", MEMCPY, "--lang", "zh")
    assert code == 0 and "是否记录到知识库？[Y/n]" in err and "已记录新案例" in out


def test_stdin_report_needs_yes(kb, run_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(pathlib.Path(MEMCPY).read_bytes())))
    code, _, err = run_cli("kb", "record", "-")
    assert code == 2 and "--yes" in err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(pathlib.Path(MEMCPY).read_bytes())))
    code, out, _ = run_cli("kb", "record", "-", "--yes", "--json")
    assert code == 0 and json.loads(out)["action"] == "created"


def test_dry_run_writes_nothing(kb, run_cli):
    code, out, _ = run_cli("kb", "record", MEMCPY, "--dry-run", "--json")
    assert code == 0 and json.loads(out)["action"] == "preview" and _files(kb) == []


def _editor(tmp_path: pathlib.Path, body: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text("import re, sys\npath = sys.argv[1]\ntext = open(path, encoding='utf-8').read()\n" + body +
                      "open(path, 'w', encoding='utf-8').write(text)\n", encoding="utf-8")
    return f"{sys.executable} {script}"


def test_edit_before_saving(kb, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "text = re.sub(r'(?m)^title:.*$', 'title: Mask built with a host copy', text)\n"))
    code, out, err = run_cli("kb", "record", MEMCPY, "--yes", "--edit", "--json")
    assert code == 0, err
    assert json.loads(out)["case"]["title"] == "Mask built with a host copy"


def test_invalid_edit_is_refused(kb, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "text = re.sub(r'(?m)^phase:.*$', 'phase: sideways', text)\n"))
    code, _, err = run_cli("kb", "record", MEMCPY, "--yes", "--edit")
    assert code == 2 and "phase must be one of" in err and len(err.strip().splitlines()) == 1
    assert _files(kb) == []


def test_emptied_edit_cancels(kb, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "text = ''\n"))
    code, _, err = run_cli("kb", "record", MEMCPY, "--yes", "--edit")
    assert code == 0 and _files(kb) == []


def test_list_show_search_export_rebuild(kb, run_cli, tmp_path):
    run_cli("kb", "record", MEMCPY, "--yes")
    code, out, _ = run_cli("kb", "record", NOVEL, "--yes", "--json")
    novel_id = json.loads(out)["case_id"]
    code, out, _ = run_cli("kb", "list", "--lang", "en")
    assert code == 0 and "P-CAP-002" in out and novel_id in out
    code, out, _ = run_cli("kb", "list", "--json")
    assert json.loads(out)["total"] == 2
    code, out, _ = run_cli("kb", "show", novel_id[:16], "--lang", "en")
    assert code == 0 and "NPUGraph::capture_begin torch_npu/csrc/core/npu/NPUGraph.cpp:270" in out
    assert "Proposal" in out or "proposal" in out
    code, out, _ = run_cli("kb", "search", "aclrtMemcpy", "107030", "--json")
    assert json.loads(out)["matches"][0]["pattern"] == "P-CAP-002"
    code, out, _ = run_cli("kb", "search", "aclrtMemcpy", "--lang", "en")
    assert "Fix: Move the host/device copy" in out
    code, out, _ = run_cli("kb", "export", "-")
    assert json.loads(out)["cases_count"] == 2
    code, out, _ = run_cli("kb", "export", str(tmp_path / "out.zip"))
    assert code == 0 and (tmp_path / "out.zip").stat().st_size > 0
    code, out, _ = run_cli("kb", "rebuild", "--json")
    assert code == 0 and json.loads(out)["history_current"] is True


def test_show_unknown_id(kb, run_cli):
    run_cli("kb", "record", MEMCPY, "--yes")
    code, _, err = run_cli("kb", "show", "C-19990101")
    assert code == 2 and "no case" in err


def test_kb_without_subcommand_prints_help(kb, run_cli):
    code, out, _ = run_cli("kb")
    assert code == 2 and "record" in out and "NPU_GRAPH_KB" in out


BAD_INPUTS = {
    "empty": b"",
    "binary": b"\x00\x01\x02 not text",
    "not_json": b"RuntimeError: NPU graphs must be captured on a non-default stream.\n",
    "gb18030": "运行时错误：图捕获失败\r\n".encode("gb18030"),
    "invalid_utf8": b"{\"error\": \"\xff\xfe broken\"",
    "list_json": b"[1, 2, 3]",
    "case_yaml_schema": b'{"schema": "npu-graph-skill/case/1", "id": "x"}',
    "no_content": b'{"schema": "npu-graph-skill/diagnosis/1", "phase": "capture"}',
    "long_line": b"x" * (10 * 1024 * 1024),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_report_inputs(kb, run_cli, tmp_path, name):
    path = tmp_path / f"{name}.json"
    path.write_bytes(BAD_INPUTS[name])
    code, out, err = run_cli("kb", "record", str(path), "--yes")
    assert code == 2, (out, err)
    assert err.startswith("npu-graph: error: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _files(kb) == []


def test_missing_directory_unreadable_truncated_gz(kb, run_cli, tmp_path):
    code, _, err = run_cli("kb", "record", str(tmp_path / "missing.json"), "--yes")
    assert code == 2 and "no such file" in err
    code, _, err = run_cli("kb", "record", str(tmp_path), "--yes")
    assert code == 2 and "directory" in err
    gz = tmp_path / "report.json.gz"
    gz.write_bytes(gzip.compress(pathlib.Path(MEMCPY).read_bytes())[:200])
    code, _, err = run_cli("kb", "record", str(gz), "--yes")
    assert code == 2 and len(err.strip().splitlines()) == 1
    if os.geteuid() != 0:  # root reads everything
        locked = tmp_path / "locked.json"
        locked.write_bytes(pathlib.Path(MEMCPY).read_bytes())
        locked.chmod(0)
        code, _, err = run_cli("kb", "record", str(locked), "--yes")
        assert code == 2 and "permission denied" in err
    assert _files(kb) == []


def test_crlf_report_reads(kb, run_cli, tmp_path):
    path = tmp_path / "crlf.json"
    path.write_bytes(pathlib.Path(MEMCPY).read_bytes().replace(b"\n", b"\r\n"))
    code, out, _ = run_cli("kb", "record", str(path), "--yes", "--json")
    assert code == 0 and json.loads(out)["action"] == "created"


def test_unwritable_kb_is_one_line(run_cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run_cli("kb", "record", MEMCPY, "--yes", "--kb", str(blocker / "kb"))
    assert code == 2 and "cannot create the knowledge base" in err


def test_diagnose_json_piped_into_record(kb, run_cli, tmp_path, monkeypatch):
    """The real contract: `npu-graph diagnose --json | npu-graph kb record - --yes --symptom FILE`."""
    pytest.importorskip("npu_graph_skill.diagnose.engine", reason="the diagnosis engine is not there yet")
    code, report_json, err = run_cli("diagnose", SYMPTOM, "--json")
    assert code in (0, 1), err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(report_json.encode("utf-8"))))
    code, out, err = run_cli("kb", "record", "-", "--yes", "--symptom", SYMPTOM, "--json")
    assert code == 0, err
    case = json.loads(out)["case"]
    assert case["phase"] == "capture" and case["pattern"].startswith("P-CAP-")
    assert case["layer"]["file"] and case["layer"]["line"] and case["layer"]["function"]
    assert "g.capture_begin()" in case["symptom"] and "LucciC" not in json.dumps(case)


def test_record_from_another_command(kb, capsys):
    """What `diagnose --record` calls: the diagnosed text as symptom, the result on stderr."""
    import argparse

    from npu_graph_skill.cases.cli import record_from_report

    report = json.loads(pathlib.Path(MEMCPY).read_text(encoding="utf-8"))
    code = record_from_report(report, argparse.Namespace(yes=True, lang="en"), symptom_text="the pasted text",
                              stream=sys.stderr)
    out, err = capsys.readouterr()
    assert code == 0 and out == "" and "Recorded new case" in err
    case = yaml_load(next((kb / "cases").glob("*.yaml")))
    assert case["symptom"] == "the pasted text"


def yaml_load(path):
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))
