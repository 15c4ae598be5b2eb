"""`npu-graph logs` as a user runs it: outputs, exit codes and the QUALITY.md bad-input list."""
from __future__ import annotations

import gzip
import io
import json
import os
import sys

import pytest

from test_logs_analyze import RANK0, RANK1, _corpus


@pytest.fixture
def ranks_dir(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "rank0.log").write_text(RANK0, encoding="utf-8")
    (folder / "rank1.log").write_text(RANK1, encoding="utf-8")
    return folder


def test_text_report(run_cli, ranks_dir):
    code, out, err = run_cli("logs", str(ranks_dir), "--lang", "en")
    assert code == 1 and err == ""  # errors found; no progress bar when stderr is not a terminal
    assert "E-010 First failure across ranks: rank 1, 2025-08-06 23:10:00" in out
    assert "rank1.log:8" in out and "Consequences on other ranks: 2 (ranks 0)" in out
    assert "T-101" in out and "T-102" in out  # 12.5 s capture, 41.2 s compile
    assert "Root-cause window" in out and "> " in out


def test_json_report(run_cli, ranks_dir):
    code, out, _ = run_cli("logs", str(ranks_dir), "--json")
    data = json.loads(out)
    assert code == 1 and data["schema"] == "npu-graph-skill/logs/1"
    assert data["first_failure"]["rank"] == 1 and data["first_failure"]["where"]["line"] == 8
    assert data["totals"]["files"] == 2 and data["totals"]["lines"] == len(RANK0.splitlines()) + len(RANK1.splitlines())
    assert {a["id"] for a in data["anomalies"]} == {"T-101", "T-102"}
    assert data["thresholds"]["capture_s"] == 10


def test_markdown_summary_and_chinese(run_cli, ranks_dir):
    code, out, _ = run_cli("logs", str(ranks_dir), "--md", "--lang", "zh")
    assert out.startswith("# npu-graph logs：") and "## E-010 跨 rank 的首个故障" in out
    assert "```text" in out and "## 时间线" in out
    code, summary, _ = run_cli("logs", str(ranks_dir), "--summary", "--lang", "en")
    assert "E-010" in summary and "Errors\n" not in summary and len(summary.splitlines()) < 15


def test_thresholds_and_filters_from_the_command_line(run_cli, ranks_dir):
    code, out, _ = run_cli("logs", str(ranks_dir / "rank1.log"), "--threshold", "capture_s=20",
                           "--threshold", "compile_s=60", "--json")
    assert json.loads(out)["anomalies"] == []
    code, out, _ = run_cli("logs", str(ranks_dir), "--rank", "0", "--json")
    assert json.loads(out)["first_failure"]["rank"] == 0
    code, out, _ = run_cli("logs", str(ranks_dir), "--since", "08-06 23:11:00", "--json")
    assert json.loads(out)["first_failure"]["only_consequences"] is True


def test_clean_log_exits_zero(run_cli, tmp_path):
    path = tmp_path / "clean.log"
    path.write_text("V0821 14:02:11.123456 4242 torch_npu/csrc/core/npu/NPUGraph.cpp:212] [rank:0] NPUGRAPH Capture begin\n"
                    "V0821 14:02:11.923456 4242 torch_npu/csrc/core/npu/NPUGraph.cpp:250] [rank:0] NPUGRAPH Capture end done: "
                    "model_ri=0x1, has_graph_exec=1\n", encoding="utf-8")
    code, out, err = run_cli("logs", str(path))
    assert code == 0 and "T-001" in out and err == ""


def test_stdin(run_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RANK1.encode("utf-8"))))
    code, out, _ = run_cli("logs", "-", "--json")
    data = json.loads(out)
    assert code == 1 and data["sources"][0]["name"] == "<stdin>" and data["first_failure"]["where"]["line"] == 8


def test_help_has_examples(run_cli):
    with pytest.raises(SystemExit):
        run_cli("logs", "--help")


@pytest.mark.parametrize("args,needle", [
    (["--threshold", "capture_s"], "NAME=VALUE"),
    (["--threshold", "capture_s=fast"], "not a number"),
    (["--threshold", "warp=1"], "unknown threshold"),
    (["--since", "tomorrow-ish"], "not a time"),
    (["--jobs", "0"], "--jobs"),
])
def test_bad_options_one_line_exit_2(run_cli, ranks_dir, args, needle):
    code, out, err = run_cli("logs", str(ranks_dir), *args)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ---- QUALITY.md bad input -------------------------------------------------------------------

def test_empty_file(run_cli, tmp_path):
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    code, out, err = run_cli("logs", str(path))
    assert code == 0 and "0 lines" in out


@pytest.mark.parametrize("name,content,needle", [
    ("bin.log", b"\x7fELF\x00\x01\x02" * 100, "binary file"),
    ("garbage.gz", b"not gzip at all\n", "compressed stream ends early"),
])
def test_unreadable_inputs_exit_2(run_cli, tmp_path, name, content, needle):
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run_cli("logs", str(path))
    assert code == 2 and needle in err and err.startswith("npu-graph: error: ") and len(err.strip().splitlines()) == 1


def test_missing_path_and_empty_directory(run_cli, tmp_path):
    code, _, err = run_cli("logs", str(tmp_path / "nope.log"))
    assert code == 2 and "no such file or directory" in err
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli("logs", str(tmp_path / "empty"))
    assert code == 2 and "holds no log files" in err


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files without read permission")
def test_unreadable_file(run_cli, tmp_path):
    path = tmp_path / "secret.log"
    path.write_text(RANK1, encoding="utf-8")
    path.chmod(0)
    try:
        code, _, err = run_cli("logs", str(path))
    finally:
        path.chmod(0o600)
    assert code == 2 and "permission denied" in err


def test_invalid_utf8_and_gb18030(run_cli, tmp_path):
    line = "[ERROR] RUNTIME(1,python):2025-01-01-00:00:00.000.000 [api_c.cc:1081]1 rtMemcpy:捕获失败 ErrCode=107030, desc=[x]\n"
    (tmp_path / "gbk.log").write_bytes(line.encode("gb18030"))
    (tmp_path / "broken.log").write_bytes(line.encode("utf-8").replace("捕".encode("utf-8"), b"\xff\xfe"))
    code, out, _ = run_cli("logs", str(tmp_path / "gbk.log"), "--json")
    assert code == 1 and "捕获失败" in json.loads(out)["first_failure"]["where"]["text"]
    code, out, _ = run_cli("logs", str(tmp_path / "broken.log"), "--json")
    assert code == 1 and json.loads(out)["first_failure"]["codes"][0]["code"] == "107030"


def test_ten_megabyte_line(run_cli, tmp_path):
    path = tmp_path / "long.log"
    path.write_bytes(b"error " + b"x" * (10 * 1024 * 1024) + b"\n"
                     + RANK1.splitlines()[7].encode("utf-8") + b"\n")
    code, out, _ = run_cli("logs", str(path), "--json")
    data = json.loads(out)
    assert code == 1 and data["totals"]["lines"] == 2 and data["first_failure"]["where"]["line"] == 2
    assert any("longer than 64 KB" in note for note in data["notes"])
    assert all(len(line) <= 2000 for line in data["first_failure"]["window"])


def test_truncated_gz_reports_what_it_read(run_cli, tmp_path):
    mixed = tmp_path / "mixed.log"
    _corpus().write_mixed_log(str(mixed), 0.5, seed=5)
    data = gzip.compress(mixed.read_bytes())
    path = tmp_path / "cut.log.gz"
    path.write_bytes(data[: len(data) // 2])
    code, out, err = run_cli("logs", str(path), "--json")
    report = json.loads(out)
    assert report["totals"]["lines"] > 0 and any("ends early" in n for n in report["notes"]) and err == ""


def test_crlf_line_endings(run_cli, tmp_path):
    path = tmp_path / "crlf.log"
    path.write_bytes(RANK1.replace("\n", "\r\n").encode("utf-8"))
    code, out, _ = run_cli("logs", str(path), "--json")
    data = json.loads(out)
    assert data["first_failure"]["where"]["line"] == 8
    assert not any("\r" in line for line in data["first_failure"]["window"])
    assert data["first_failure"]["where"]["text"] == RANK1.splitlines()[7]


def test_ctrl_c_is_one_line_exit_2(run_cli, ranks_dir, monkeypatch):
    from npu_graph_skill.logs import scan

    def interrupted(task):
        raise KeyboardInterrupt

    monkeypatch.setattr(scan, "scan_task", interrupted)
    code, out, err = run_cli("logs", str(ranks_dir))
    assert code == 2 and err.strip() == "npu-graph: interrupted" and out == ""


def test_progress_bar_only_on_a_terminal():
    from npu_graph_skill.logs.cli import _Progress

    class Stream(io.StringIO):
        def __init__(self, tty):
            super().__init__()
            self.tty = tty

        def isatty(self):
            return self.tty

    piped = Stream(False)
    bar = _Progress(piped, min_bytes=10)
    bar(50, 100)
    bar.close()
    assert piped.getvalue() == ""
    terminal = Stream(True)
    bar = _Progress(terminal, min_bytes=10)
    bar(50, 100)
    assert "50.0%" in terminal.getvalue() and terminal.getvalue().startswith("\r[")
    bar.close()
    assert terminal.getvalue().endswith("\r")
    small = Stream(True)
    tiny = _Progress(small, min_bytes=1000)
    tiny(50, 100)  # small inputs finish before a bar would help
    assert small.getvalue() == ""


def test_no_path_on_a_terminal_is_a_usage_error(run_cli, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    code, _, err = run_cli("logs")
    assert code == 2 and "needs a file or a directory" in err
