"""Redaction: planted secrets never reach a saved case; ordinary error text stays as it was."""
from __future__ import annotations

import pytest

from npu_graph_skill.cases.redact import Redactor, describe

PLANTED = {
    "/home/alice": "home_path",
    "alice": "user_name",
    "gpu-node17": "hostname",
    "dgx-a100-07": "hostname",
    "worker-3.corp": "hostname",
    "192.168.10.21": "ip",
    "fe80::1ff:fe23:4567:890a": "ip",
    "2001:db8::8a2e:370:7334": "ip",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345": "token",
    "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx": "token",
    "AKIAIOSFODNN7EXAMPLE": "token",
    "abcd1234efgh5678": "token",
    "eyJhbGciOiJIUzI1NiJ9": "token",
    "s3cretPass": "token",
    "alice.wang@example.com": "email",
}

TEXT = """[alice@gpu-node17 work]$ HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345 python /home/alice/proj/run.py
(EngineCore_0 pid=519998) ERROR 08-05 11:23:25 [core.py:632] rank 3 at 192.168.10.21:29500 owned by alice
peer fe80::1ff:fe23:4567:890a and 2001:db8::8a2e:370:7334, MASTER_ADDR=worker-3.corp
hostname=dgx-a100-07 OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx aws AKIAIOSFODNN7EXAMPLE token=abcd1234efgh5678
Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U
pip index https://alice:s3cretPass@mirror.example.com/simple mail alice.wang@example.com, script /root/run.sh
"""

# Error text that must survive untouched: versions, C++ namespaces, times, counters, loopback, codes.
KEEP = [
    "CANN 8.0.RC3", "torch_npu 2.5.1.post1", "CANN version 7.0.0.1", "c10::Error", "at::Tensor", "c10::add",
    "06:46:08.123", "max_num_batched_tokens=8192", "127.0.0.1", "::1", "aclmdlRICaptureBegin",
    "error code is 107030", "git@github.com:Ascend/pytorch.git", "threading.local", "num_tokens: 128",
    "max_token=4096", "copy_between_host_and_device_opapi", "NPU function error: aclrtMemcpy",
]


def test_planted_secrets_are_removed_and_counted():
    redactor = Redactor()
    out = redactor.text(TEXT)
    for secret in PLANTED:
        assert secret not in out, f"{secret} survived redaction:\n{out}"
    counts = redactor.summary()
    for kind in set(PLANTED.values()):
        assert counts.get(kind), f"no {kind} counted: {counts}"
    assert "~/proj/run.py" in out and "~/run.sh" in out  # paths stay readable


@pytest.mark.parametrize("text", KEEP)
def test_ordinary_error_text_is_kept(text):
    assert Redactor().text(text) == text


def test_redaction_is_idempotent_and_walks_nested_data():
    redactor = Redactor()
    data = {"symptom": TEXT, "fix": {"locations": ["/home/alice/proj/run.py:12"]}, "n": 3}
    once = redactor.apply(data)
    again = Redactor().apply(once)
    assert again == once
    assert once["fix"]["locations"] == ["~/proj/run.py:12"] and once["n"] == 3


def test_local_user_and_host_names_are_replaced_anywhere():
    redactor = Redactor(names=["zhangsan"], hosts=["ascend-box-42"])
    out = redactor.text("job of zhangsan failed on ascend-box-42 (ascend-box-42.lab)")
    assert "zhangsan" not in out and "ascend-box-42" not in out
    # common words are never taken as user names
    assert Redactor(names=["root", "user"]).text("root cause: user code") == "root cause: user code"


def test_describe_lists_what_was_removed_in_both_languages():
    counts = {"home_path": 2, "token": 1}
    assert describe(counts, "en") == "2 home paths, 1 token / key"
    assert describe(counts, "zh") == "家目录路径 2 处，令牌 / 密钥 1 处"
