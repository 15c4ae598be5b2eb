"""Signatures: the same failure met again (other pid, time, path, line, worker) has the same
signature; another error code or another message does not. Proposal regexes match their source."""
from __future__ import annotations

import re

from npu_graph_skill.cases.signature import decisive_part, message_regex, normalize_message, signature

# The same torch_npu error from two real-world layouts (vLLM worker prefix, another install path and line).
FIRST = ("(Worker_TP0 pid=496) ERROR 07-27 06:46:08 [multiproc_executor.py:962] RuntimeError: "
         "copy_between_host_and_device_opapi:../torch_npu/csrc/aten/ops/op_api/CopyKernelOpApi.cpp:55 "
         "NPU function error: aclrtMemcpy, error code is 107030")
SECOND = ("(EngineCore_0 pid=519998) ERROR 08-05 11:23:25 [core.py:632] RuntimeError: "
          "copy_between_host_and_device_opapi:/usr/lib/python3.10/site-packages/torch_npu/csrc/aten/ops/op_api/"
          "CopyKernelOpApi.cpp:61 NPU function error: aclrtMemcpy, error code is 107030")
OTHER_CODE = FIRST.replace("107030", "107027")


def test_same_failure_in_another_run_has_the_same_signature():
    assert signature("P-CAP-002", FIRST)["hash"] == signature("P-CAP-002", SECOND)["hash"]


def test_error_code_and_pattern_are_part_of_the_signature():
    assert signature("P-CAP-002", FIRST)["hash"] != signature("P-CAP-002", OTHER_CODE)["hash"]
    assert signature("P-CAP-002", FIRST)["hash"] != signature("NEW", FIRST)["hash"]


def test_normalised_message_masks_variable_parts_and_keeps_codes():
    text = ("[ERROR] 2025-01-01-10:10:10 (PID:1234, Device:0, RankID:3) ERR00100 PTA call acl api failed")
    assert normalize_message(text) == "ERR00100 PTA call acl api failed"
    oom = "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity)"
    assert normalize_message(oom) == ("torch.OutOfMemoryError: NPU out of memory. Tried to allocate <n> GiB "
                                      "(NPU <n>; <n> GiB total capacity)")
    ecode = "EE1016: 2024-01-01-10:00:00.123.456 Memory copy failed, addr 0x12c0a0000 size 4096"
    assert normalize_message(ecode) == "EE1016: <ts> Memory copy failed, addr <hex> size <n>"


def test_decisive_part_drops_the_log_prefix():
    assert decisive_part(FIRST).startswith("RuntimeError: copy_between_host_and_device_opapi")


def test_message_regex_matches_its_source_and_the_same_error_elsewhere():
    regex = message_regex(FIRST, keep=["107030"])
    assert re.search(regex, FIRST)
    assert re.search(regex, SECOND)
    assert not re.search(regex, OTHER_CODE)
