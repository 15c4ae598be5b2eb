"""NGL013: ASCEND_LAUNCH_BLOCKING=1 set in code."""
import os

os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"  # expect: NGL013
os.environ.setdefault("ASCEND_LAUNCH_BLOCKING", "1")  # expect: NGL013
os.environ.update({"ASCEND_LAUNCH_BLOCKING": "1"})  # expect: NGL013
os.putenv("ASCEND_LAUNCH_BLOCKING", "1")  # expect: NGL013
os.environ["ASCEND_LAUNCH_BLOCKING"] = "0"
os.environ["TORCH_NPU_LOGS"] = "+aclgraph"


def test_blocking(monkeypatch):
    monkeypatch.setenv("ASCEND_LAUNCH_BLOCKING", "1")  # expect: NGL013
    monkeypatch.setenv("ASCEND_LAUNCH_BLOCKING", "0")
