"""`npu-graph code` on a real installed torch_npu: the Python files of the torch-npu 2.13.0 wheel.

The wheel is fetched once with `pip download --no-deps torch-npu==2.13.0` into a cache that
survives between runs ($NPU_GRAPH_TEST_CACHE, else $XDG_CACHE_HOME/npu-graph-skill-tests, else
~/.cache/npu-graph-skill-tests), and only `torch_npu/**/*.py` is unpacked, as a site-packages
directory. The index of its ~1,700 files is cached there too: the first run scans them (several
seconds on a small machine), later runs load the cache. Skipped, with the reason, when the wheel
cannot be downloaded (offline).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

from npu_graph_skill.expert import source_index

VERSION = "2.13.0"
GIT_VERSION = "c798c6532a0d05c1863489e83cb7e3985be4e830"  # torch_npu/version.py in the 2.13.0 wheel


def _cache_root() -> pathlib.Path:
    explicit = os.environ.get("NPU_GRAPH_TEST_CACHE")
    if explicit:
        return pathlib.Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "npu-graph-skill-tests"


def _download(wheels: pathlib.Path) -> pathlib.Path:
    found = sorted(wheels.glob(f"torch_npu-{VERSION}-*.whl"))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", str(wheels)]
    attempts = [
        base + [f"torch-npu=={VERSION}"],
        # no wheel for this Python/platform: the Python files are the same in every wheel
        base + ["--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "311",
                f"torch-npu=={VERSION}"],
    ]
    errors = []
    for command in attempts:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            errors.append(str(exc))
            continue
        found = sorted(wheels.glob(f"torch_npu-{VERSION}-*.whl"))
        if found:
            return found[0]
        errors.append((done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel"])
    pytest.skip(f"torch-npu=={VERSION} could not be downloaded (offline?): {errors[-1]}")


def _unpack(wheel: pathlib.Path, target: pathlib.Path) -> None:
    """Only torch_npu/**/*.py, into target/site-packages (atomically: a half-unpacked tree never stays)."""
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("torch_npu/") and name.endswith(".py"):
                archive.extract(name, staging / "site-packages")
    os.replace(staging, target)


@pytest.fixture(scope="module")
def package():
    """(site-packages directory, its torch_npu directory) of the unpacked 2.13.0 wheel."""
    root = _cache_root()
    target = root / f"torch_npu-{VERSION}-py"
    if not (target / "site-packages" / "torch_npu" / "npu" / "graphs.py").is_file():
        _unpack(_download(root / "wheels"), target)
    site = target / "site-packages"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NPU_GRAPH_CACHE_DIR", str(root / "index"))  # kept between runs: later runs load, not scan
        patch.setenv("NPU_GRAPH_LANG", "en")
        source_index._MEMO.clear()
        yield site, site / "torch_npu"
    source_index._MEMO.clear()


def test_installed_package_is_recognised_with_its_version(package):
    from npu_graph_skill.api import code_index

    report = code_index(str(package[1]))
    assert (report.tree["kind"], report.tree["version"]) == ("package", f"{VERSION}+{GIT_VERSION[:12]}")
    assert report.tree["label"] == f"torch_npu {VERSION} (git {GIT_VERSION[:8]})"
    assert report.counts["cpp_files"] == 0 and report.counts["python_files"] > 1500
    assert report.counts["functions"] > 10000 and report.counts["sites"] > 3000


def test_locate_make_graphed_callables_and_capture_begin(package, run_cli):
    import json

    code, out, _ = run_cli("code", "locate", "make_graphed_callables", "--source", str(package[0]), "--json")
    found = json.loads(out)["definitions"]
    assert code == 0
    assert [(d["file"], d["start"], d["end"], d["kind"]) for d in found] == [("torch_npu/npu/graphs.py", 935, 1244, "function")]
    assert found[0]["signature"].startswith("def make_graphed_callables(callables, sample_args, num_warmup_iters=3")
    code, out, _ = run_cli("code", "locate", "NPUGraph.capture_begin", "--source", str(package[1]), "--json")
    assert [(d["file"], d["start"], d["end"]) for d in json.loads(out)["definitions"]] == [("torch_npu/npu/graphs.py", 607, 624)]
    lines = (package[0] / "torch_npu" / "npu" / "graphs.py").read_text(encoding="utf-8").splitlines()
    assert lines[606].strip().startswith("def capture_begin(self, pool=None")
    code, out, _ = run_cli("code", "locate", "torch.npu.graph", "--source", str(package[1]), "--json")
    assert [(d["file"], d["start"]) for d in json.loads(out)["definitions"]] == [("torch_npu/npu/graphs.py", 844)]


def test_raise_site_for_python_messages(package):
    from npu_graph_skill.api import find_raise_site

    pasted = ("RuntimeError: ('The current graph configuration does not support update,Try to capture by setting "
              "auto_dispatch_capture=True during capture', '\\n[ERROR] 2026-10-15-10:00:00 (PID:7, Device:0, RankID:-1) "
              "ERR00001 PTA invalid parameter')")
    best = find_raise_site(pasted, source_dir=str(package[1])).matches[0]
    assert (best.file, best.line, best.kind, best.call, best.quality) == ("torch_npu/npu/graphs.py", 658, "raise", "RuntimeError", "full")
    assert (best.function, best.function_start, best.function_end) == ("NPUGraph.update", 655, 663)
    assert best.error_code == "pta_error(ErrCode.PARAM)"
    # an f-string: the key the user passed stands where the source has {key}
    best = find_raise_site("Invalid super_kernel_optimize_options param key: 'bogus'.", source_dir=str(package[1])).matches[0]
    assert (best.file, best.line, best.quality) == ("torch_npu/npu/graphs.py", 819, "full")


def test_drill_down_maps_frames_of_an_installed_torch_npu(package):
    from npu_graph_skill.core.model import Frame
    from npu_graph_skill.expert.code import drill_down

    frames = [Frame(file="/home/me/train.py", line=3, function="<module>"),
              Frame(file="/usr/local/python3.11/lib/python3.11/site-packages/torch_npu/npu/graphs.py", line=659,
                    function="update")]
    steps = drill_down(frames, [], "The current graph configuration does not support update,Try to capture by "
                       "setting auto_dispatch_capture=True during capture", source_dir=str(package[1]))
    assert [(s["layer"], s["where"], s["function"]) for s in steps] == [
        ("L1", "torch_npu/npu/graphs.py:659", "NPUGraph.update"), ("L1", "torch_npu/npu/graphs.py:658", "NPUGraph.update")]
    assert (steps[0]["start"], steps[0]["end"]) == (655, 663)
    assert ">659 |" in steps[0]["excerpt"] and "torch_npu 2.13.0" in steps[0]["anchor"]


def test_verify_anchors_on_the_package(package, shared_data):
    from npu_graph_skill.api import verify_anchors

    report = verify_anchors(str(package[1]), messages_csv=str(shared_data / "messages.csv"))
    assert report.summary["wrong"] == 0
    assert report.summary["ok"] >= 150  # the Python raise sites of the table, found in 2.13.0
    skipped = [c for c in report.checks if c.status == "skipped" and c.anchor.startswith("Ascend/pytorch ")
               and c.anchor.split(" ")[1].split(":")[0].endswith((".cpp", ".h"))]
    assert skipped and all("not part of an installed" in c.detail["en"] for c in skipped)
