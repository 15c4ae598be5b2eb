"""The doctor's fact readers: npu-smi / nvidia-smi output, the compatibility table, version files."""
from __future__ import annotations

from doctor_doubles import NPU_SMI_HEALTHY

from npu_graph_skill.doctor import ascend, compat
from npu_graph_skill.doctor.checks import capture_supported_soc, installed_log_aliases
from npu_graph_skill.doctor.smi import parse_npu_smi, parse_nvidia_smi_csv

# Atlas A3 layout: two chips per NPU, a Phy-ID column, a container pid column (format of
# vllm-project/vllm-ascend#12980; numbers are ours).
NPU_SMI_A3 = """\
| npu-smi 26.0.rc2                            Version: 26.0.rc2                                                    |
| NPU   Name                | Health        | Power(W)             Temp(C)                 Hugepages-Usage(page)   |
| Chip  Phy-ID              | Bus-Id        | AICore(%)            Memory-Usage(MB)        HBM-Usage(MB)           |
+===========================+===============+======================================================================+
| 0     Ascend910           | OK            | 160.2                35                      0    / 0                |
| 0     0                   | 0000:9D:00.0  | 3                    0    / 0                3400 / 65536            |
+------------------------------------------------------------------------------------------------------------------+
| 0     Ascend910           | Warning       | -                    36                      0    / 0                |
| 1     1                   | 0000:9F:00.0  | 0                    0    / 0                41000/ 65536            |
+===========================+===============+======================================================================+
| NPU     Chip              | Process id    | Process name       | Process memory(MB)    | Process id in container |
+===========================+===============+======================================================================+
| 0       1                 | 70001         | python3.11         | 37500                 | NA                      |
"""

# Atlas 300I Duo (310P) layout: no HBM, the memory pair is Memory-Usage.
NPU_SMI_310P = """\
| npu-smi 23.0.0                   Version: 23.0.0                                               |
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)                       |
| 0     310P3               | OK            | NA          49                0     / 0            |
| 0                         | 0000:01:00.0  | 0           1620 / 21527                           |
"""


def test_npu_smi_a2_layout():
    report = parse_npu_smi(NPU_SMI_HEALTHY)
    assert report.version == "25.2.0"
    assert [(d.npu, d.name, d.health, d.memory_used_mb, d.memory_total_mb) for d in report.devices] == [
        ("0", "910B3", "OK", 3390, 65536), ("1", "910B3", "OK", 3388, 65536)]
    assert report.processes == []


def test_npu_smi_a3_layout_with_two_chips_and_a_process():
    report = parse_npu_smi(NPU_SMI_A3)
    assert [(d.npu, d.chip, d.health, d.memory_used_mb) for d in report.devices] == [
        ("0", "0", "OK", 3400), ("0", "1", "Warning", 41000)]
    assert report.devices[0].aicore_percent == 3.0 and report.devices[0].bus_id == "0000:9D:00.0"
    assert [(p.npu, p.chip, p.pid, p.name, p.memory_mb) for p in report.processes] == [
        ("0", "1", "70001", "python3.11", 37500)]


def test_npu_smi_310p_layout_without_hbm():
    device = parse_npu_smi(NPU_SMI_310P).devices[0]
    assert (device.name, device.memory_used_mb, device.memory_total_mb) == ("310P3", 1620, 21527)


def test_npu_smi_garbage_gives_no_devices():
    assert parse_npu_smi("dcmi module initialize failed. ret is -8005\n").devices == []
    assert parse_npu_smi("").devices == []


def test_nvidia_smi_csv():
    gpus = parse_nvidia_smi_csv("0, NVIDIA H200, 570.86.15, 1200, 143771\n1, NVIDIA H200, 570.86.15, [N/A], 143771\n")
    assert [(g.index, g.name, g.memory_used_mb) for g in gpus] == [("0", "NVIDIA H200", 1200), ("1", "NVIDIA H200", None)]


def test_compatibility_table_lookups():
    assert len(compat.RELEASES) == 62
    release = compat.find_release("2.7.1.post8")
    assert (release.torch, release.cann, release.line) == ("2.7.1", "9.1.0", "26.1.0")
    assert compat.find_release("2.8.0").line == "7.2.0"
    assert compat.find_release("2.13.0") is None
    assert compat.newest_release().package == "2.12.0"
    assert compat.base_version("2.13.0+cpu") == compat.base_version("2.13.0rc1") == "2.13.0"
    assert compat.same_cann("8.3.RC1", "8.3.rc1") and compat.same_cann("9.1.0", "9.1.0.1")
    assert not compat.same_cann("9.1.0", "9.0.0")
    assert compat.python_supported("2.9.0", "3.9.18") is False
    assert compat.python_supported("2.13.0+cpu", "3.11.7") is True
    assert compat.python_supported("3.0.0", "3.11") is None


def test_every_table_row_pairs_a_torch_npu_with_its_torch():
    for release in compat.RELEASES:
        if release.package.startswith(("1.5.0.post3",)):  # the table itself pairs 1.5.0.post3 with torch 1.8.1
            continue
        assert compat.base_version(release.package) == release.torch, release


def test_capture_support_by_soc():
    assert capture_supported_soc("Ascend910B4_1") and capture_supported_soc("Ascend910_9362")
    assert capture_supported_soc("Ascend910ProB") is False and capture_supported_soc("Ascend910B") is False
    assert capture_supported_soc("NVIDIA H200") is None


def test_version_files(tmp_path):
    (tmp_path / "version.info").write_bytes(b"Version=24.1.rc2\r\npackage_version=24.1.rc2.2\r\n\xff\xfe=x\r\n")
    assert ascend.read_key_values(str(tmp_path / "version.info"))["package_version"] == "24.1.rc2.2"
    assert ascend.read_key_values(str(tmp_path / "missing")) == {}
    assert ascend.read_key_values(str(tmp_path)) == {}  # a directory
    assert ascend.firmware_in_range("7.5.0.1.129", ["7.0.0", "7.7.99"]) is True
    assert ascend.firmware_in_range("7.8.0.1.1", ["7.0.0", "7.7.99"]) is False
    assert ascend.firmware_in_range("", ["7.0.0", "7.7.99"]) is None


def test_new_cann_layout_is_found(tmp_path):
    cann = tmp_path / "Ascend" / "cann-9.0.0"
    (cann / "runtime").mkdir(parents=True)
    (cann / "runtime" / "version.info").write_text("Version=9.0.0\n")
    (cann / "set_env.sh").write_text("")
    (tmp_path / "Ascend" / "cann").symlink_to(cann)
    info = ascend.find_toolkit({}, str(tmp_path / "Ascend"))
    assert (info.version, info.found_by, info.sourced) == ("9.0.0", "default location", False)
    assert info.set_env.endswith("set_env.sh")


def test_log_aliases_read_from_the_installed_source(tmp_path):
    from doctor_doubles import fake_torch_npu

    assert installed_log_aliases(fake_torch_npu(tmp_path / "a", ("aclgraph",))) == ["aclgraph"]
    assert installed_log_aliases(str(tmp_path / "nowhere")) is None
