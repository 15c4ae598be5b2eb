"""`npu-graph diagnose | errcode | patterns` as a user runs them, bad input included (QUALITY.md)."""
from __future__ import annotations

import gzip
import io
import json
import os
import pathlib
import subprocess
import sys


REPO = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "capture-default-stream.txt"


def test_readme_example_gives_the_capture_phase_and_the_default_stream_pattern(run_cli):
    code, out, err = run_cli("diagnose", str(EXAMPLE), "--json", "--lang", "en")
    assert code == 0, err
    data = json.loads(out)
    assert data["phase"] == "capture"
    assert data["candidates"][0]["id"] == "P-CAP-003"
    assert data["layer"] == "L2" and data["root_layer"] == "L1"
    assert any("NPUGraph.cpp:270" in step["where"] for step in data["drill_down"])


def test_text_and_markdown_reports_have_the_four_sections(run_cli):
    _, text, _ = run_cli("diagnose", str(EXAMPLE), "--lang", "en")
    for heading in ("Overview", "Root cause", "Fix", "Verification"):
        assert heading in text
    _, md, _ = run_cli("diagnose", str(EXAMPLE), "--md", "--lang", "zh")
    for heading in ("## 1. 问题概况", "## 2. 根因分析", "## 3. 修复建议", "## 4. 验证步骤"):
        assert heading in md


def test_error_text_on_the_command_line(run_cli):
    code, out, _ = run_cli("diagnose", "-e", "Capture must end on the same stream it began on.", "--json")
    assert code == 0 and json.loads(out)["candidates"][0]["id"] == "P-CAP-009"


def test_stdin(monkeypatch, run_cli):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes())))
    code, out, _ = run_cli("diagnose", "-", "--json")
    assert code == 0 and json.loads(out)["phase"] == "capture"


def test_output_file_is_written_whole(tmp_path, run_cli):
    target = tmp_path / "report.json"
    code, out, _ = run_cli("diagnose", str(EXAMPLE), "--json", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text(encoding="utf-8"))["phase"] == "capture"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


# --- bad input: one line, exit 2, no traceback -------------------------------------------------

def _bad(run_cli, *args):
    code, out, err = run_cli(*args)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_empty_file(tmp_path, run_cli):
    (tmp_path / "empty.txt").write_text("")
    assert "empty" in _bad(run_cli, "diagnose", str(tmp_path / "empty.txt"))


def test_binary_file(tmp_path, run_cli):
    (tmp_path / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01\x02" * 100)
    assert "binary" in _bad(run_cli, "diagnose", str(tmp_path / "core.bin"))


def test_missing_path(tmp_path, run_cli):
    assert "no such file" in _bad(run_cli, "diagnose", str(tmp_path / "nope.log"))


def test_directory_without_logs(tmp_path, run_cli):
    (tmp_path / "sub").mkdir()
    assert "no log files" in _bad(run_cli, "diagnose", str(tmp_path / "sub"))


def test_unreadable_file(tmp_path, run_cli, monkeypatch):
    path = tmp_path / "secret.log"
    path.write_text("RuntimeError: x\n")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(path) else real_access(p, mode))
    assert "permission denied" in _bad(run_cli, "diagnose", str(path))


def test_invalid_utf8_and_gb18030_chinese_are_read(tmp_path, run_cli):
    path = tmp_path / "mixed.log"
    chinese = "错误：图捕获失败\n".encode("gb18030")
    path.write_bytes(chinese + b"\xff\xfe broken bytes\n" + EXAMPLE.read_bytes())
    code, out, _ = run_cli("diagnose", str(path), "--json")
    assert code == 0 and json.loads(out)["candidates"][0]["id"] == "P-CAP-003"


def test_ten_megabyte_single_line(tmp_path, run_cli):
    path = tmp_path / "long.log"
    path.write_bytes(b"x" * (10 * 1024 * 1024) + b"\n" + EXAMPLE.read_bytes())
    code, out, _ = run_cli("diagnose", str(path), "--json")
    assert code == 0 and json.loads(out)["candidates"][0]["id"] == "P-CAP-003"


def test_truncated_gzip_gives_a_best_effort_result_that_says_so(tmp_path, run_cli):
    blob = gzip.compress(EXAMPLE.read_bytes() + b"more log\n" * 20000)
    path = tmp_path / "cut.log.gz"
    path.write_bytes(blob[: len(blob) // 2])
    code, out, _ = run_cli("diagnose", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["candidates"][0]["id"] == "P-CAP-003"
    assert any("ends early" in note for note in data["notes"])


def test_crlf_line_endings(tmp_path, run_cli):
    path = tmp_path / "crlf.log"
    path.write_bytes(EXAMPLE.read_bytes().replace(b"\n", b"\r\n"))
    code, out, _ = run_cli("diagnose", str(path), "--json")
    assert code == 0 and json.loads(out)["candidates"][0]["id"] == "P-CAP-003"


def test_ctrl_c_is_one_line_and_exit_2(monkeypatch, run_cli):
    import npu_graph_skill.api as api

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "diagnose", interrupted)
    assert "interrupted" in _bad(run_cli, "diagnose", str(EXAMPLE))


def test_unwritable_output(tmp_path, run_cli):
    assert "cannot write" in _bad(run_cli, "diagnose", str(EXAMPLE), "-o", str(tmp_path / "no" / "dir" / "r.json"))


# --- errcode and patterns ----------------------------------------------------------------------

def test_errcode_hex_and_json(run_cli):
    code, out, _ = run_cli("errcode", "0x7bc83", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["normalized"] == "507011"
    assert data["entries"][0]["name"] == "ACL_ERROR_RT_MODEL_EXECUTE"
    assert "P-REP-002" in data["patterns"]


def test_errcode_unknown_and_invalid(run_cli):
    code, out, _ = run_cli("errcode", "0x100000")
    assert code == 1 and "507011" in out
    assert "not an error code" in _bad(run_cli, "errcode", "hello")


def test_patterns_json_lists_every_pattern(run_cli):
    from npu_graph_skill.knowledge.loader import load_knowledge

    code, out, _ = run_cli("patterns", "--json")
    assert code == 0
    ids = [p["id"] for p in json.loads(out)["patterns"]]
    assert ids == [p.id for p in load_knowledge().patterns]
    _, out, _ = run_cli("patterns", "--phase", "update", "--json")
    assert {p["phase"] for p in json.loads(out)["patterns"]} == {"update"}


def test_pattern_show_and_unknown_id(run_cli):
    code, out, _ = run_cli("patterns", "P-CAP-003", "--lang", "en")
    assert code == 0 and "NPUGraph.cpp:270-274" in out
    err = _bad(run_cli, "patterns", "P-CAP-03")
    assert "did you mean" in err and "P-CAP-003" in err
    # a number written short means the zero-padded id, first, even where P-CAP-030 / P-CAP-031 look closer
    assert "did you mean P-CAP-003," in _bad(run_cli, "patterns", "p-cap-3")


def test_console_script_runs_as_a_process():
    result = subprocess.run([sys.executable, "-m", "npu_graph_skill", "diagnose", str(EXAMPLE), "--json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["phase"] == "capture"
