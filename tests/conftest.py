"""Shared fixtures. Real data lives in ../shared/data (cases, samples, code tables): tests read it
through `shared_data` and skip with a clear reason where it is absent."""
from __future__ import annotations

import functools
import importlib.util
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def load_benchmark(name: str):
    """A script of benchmarks/ as a module (they are scripts, not a package), loaded once per session; it is
    registered in sys.modules so its dataclasses and the scripts it imports by name resolve."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def find_shared_data() -> pathlib.Path | None:
    """../shared/data, as the benchmark scripts find it (benchmarks/shared_data.py)."""
    return load_benchmark("shared_data").find_shared_data()


@pytest.fixture(scope="session")
def shared_data() -> pathlib.Path:
    path = find_shared_data()
    if path is None:
        pytest.skip("shared data (../shared/data) not found; set NPU_GRAPH_SHARED_DATA to run this test")
    return path


@pytest.fixture(scope="session")
def shared_cases(shared_data: pathlib.Path) -> list:
    import yaml

    cases = []
    for path in sorted((shared_data / "cases").glob("*.yaml")):
        with open(path, encoding="utf-8") as handle:
            cases.append(yaml.safe_load(handle))
    return cases


@pytest.fixture
def run_cli(capsys):
    """Run `npu-graph ARGS` in-process; returns (exit code, stdout, stderr)."""
    from npu_graph_skill.cli import main

    def run(*args: str):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


# Hypothesis (the `test` extra): a bounded example budget so `pytest` stays quick in CI;
# HYPOTHESIS_PROFILE=thorough explores more, with fresh random examples on every run.
try:
    from hypothesis import HealthCheck, settings as _hypothesis_settings
except ImportError:  # pragma: no cover - the property tests skip themselves
    pass
else:
    _hypothesis_settings.register_profile(  # derandomized: CI fails on a code change, never on a new draw
        "ci", max_examples=40, deadline=None, print_blob=True, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    _hypothesis_settings.register_profile(
        "thorough", max_examples=1000, deadline=None, print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
