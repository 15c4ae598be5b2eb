"""Facts about the Ascend software stack read from files and the environment, no process started.

- CANN toolkit: `$ASCEND_HOME_PATH` / `$ASCEND_TOOLKIT_HOME` (exported by the toolkit's
  `set_env.sh`; the default path of Ascend/pytorch README.md:106 is
  `/usr/local/Ascend/ascend-toolkit/set_env.sh`), else the usual install places. Its version is in
  `ascend_*_install.info` (`version=`, what torch_npu's own collect_env reads:
  torch_npu/utils/collect_env.py:75-89@9e73e708) or `runtime/version.info` (`Version=`).
- Driver: `/usr/local/Ascend/driver/version.info` (`Version=`, `package_version=`,
  `compatible_version_fw=[low,high]`); firmware: `/usr/local/Ascend/firmware/version.info`. In a
  container both must be mounted from the host (see the docker run lines of vllm-ascend's docs).
"""
from __future__ import annotations

import dataclasses
import glob
import os
import re
from typing import Dict, List, Mapping, Optional, Tuple

from npu_graph_skill.core.model import Record

DEFAULT_BASE = "/usr/local/Ascend"
DEFAULT_SET_ENV = "/usr/local/Ascend/ascend-toolkit/set_env.sh"
HOME_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")


def read_key_values(path: str, limit: int = 64 * 1024) -> Dict[str, str]:
    """`key=value` lines of a small version file; {} when it cannot be read."""
    values: Dict[str, str] = {}
    try:
        with open(path, "rb") as handle:
            raw = handle.read(limit)
    except OSError:
        return values
    for line in raw.decode("utf-8", "replace").splitlines():
        if "=" in line:
            key, _, value = line.partition("=")
            values.setdefault(key.strip(), value.strip())
    return values


@dataclasses.dataclass
class ToolkitInfo(Record):
    path: str = ""  # the toolkit home, as found (not resolved)
    found_by: str = ""  # ASCEND_HOME_PATH | ASCEND_TOOLKIT_HOME | default location
    version: str = ""
    version_file: str = ""
    set_env: str = ""  # the set_env.sh that belongs to it
    env_home: str = ""  # what ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME say
    env_home_exists: bool = False
    lib_on_loader_path: bool = False  # <home>/lib64 is on LD_LIBRARY_PATH
    tried: List[str] = dataclasses.field(default_factory=list)

    @property
    def sourced(self) -> bool:
        return bool(self.env_home) and self.env_home_exists


def toolkit_candidates(environ: Mapping[str, str], base: str = DEFAULT_BASE) -> List[Tuple[str, str]]:
    """(path, how it was found), the environment first."""
    found = []
    for var in HOME_VARS:
        if environ.get(var):
            found.append((environ[var], var))
    home = environ.get("HOME", "")
    for path in (os.path.join(base, "ascend-toolkit", "latest"), os.path.join(base, "cann"),
                 os.path.join(home, "Ascend", "ascend-toolkit", "latest") if home else ""):
        if path:
            found.append((path, "default location"))
    return found


def toolkit_version(home: str) -> Tuple[str, str]:
    """(version, file) from the toolkit's install info or runtime version file."""
    patterns = [os.path.join(home, "*-linux", "ascend_toolkit_install.info"),
                os.path.join(home, "ascend_toolkit_install.info"),
                os.path.join(home, "*-linux", "ascend_*_install.info"),
                os.path.join(home, "ascend_*_install.info")]
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            version = read_key_values(path).get("version", "")
            if version:
                return version, path
    for sub in ("runtime", "compiler", "toolkit"):
        path = os.path.join(home, sub, "version.info")
        version = read_key_values(path).get("Version", "")
        if version:
            return version, path
    return "", ""


def find_set_env(home: str) -> str:
    """The set_env.sh of a toolkit: in it, or one level up (`ascend-toolkit/set_env.sh` for `latest`)."""
    places = [home, os.path.dirname(home.rstrip("/"))]
    real = os.path.realpath(home)
    places += [real, os.path.dirname(real)]
    for place in places:
        path = os.path.join(place, "set_env.sh")
        if place and os.path.isfile(path):
            return path
    return ""


def find_toolkit(environ: Mapping[str, str], base: str = DEFAULT_BASE) -> ToolkitInfo:
    info = ToolkitInfo()
    for var in HOME_VARS:
        if environ.get(var):
            info.env_home = environ[var]
            info.env_home_exists = os.path.isdir(environ[var])
            break
    for path, how in toolkit_candidates(environ, base):
        info.tried.append(path)
        if not os.path.isdir(path):
            continue
        info.path, info.found_by = path, how
        info.version, info.version_file = toolkit_version(path)
        info.set_env = find_set_env(path)
        break
    if info.path:
        wanted = {os.path.realpath(os.path.join(info.path, "lib64"))}
        entries = [e for e in environ.get("LD_LIBRARY_PATH", "").split(":") if e]
        info.lib_on_loader_path = any(os.path.realpath(e) in wanted for e in entries)
    return info


@dataclasses.dataclass
class DriverInfo(Record):
    path: str = ""
    version: str = ""
    version_file: str = ""
    firmware_version: str = ""
    firmware_file: str = ""
    firmware_range: List[str] = dataclasses.field(default_factory=list)  # driver's compatible_version_fw


def find_driver(base: str = DEFAULT_BASE) -> DriverInfo:
    info = DriverInfo()
    driver_dir = os.path.join(base, "driver")
    version_file = os.path.join(driver_dir, "version.info")
    if os.path.isdir(driver_dir) or os.path.isfile(version_file):
        info.path = driver_dir
    values = read_key_values(version_file)
    if values:
        info.version_file = version_file
        info.version = values.get("package_version") or values.get("Version", "")
        fw_range = re.findall(r"[\d.]+\w*", values.get("compatible_version_fw", ""))
        info.firmware_range = fw_range[:2] if len(fw_range) >= 2 else []
    firmware_file = os.path.join(base, "firmware", "version.info")
    firmware = read_key_values(firmware_file)
    if firmware:
        info.firmware_file = firmware_file
        info.firmware_version = firmware.get("Version") or firmware.get("package_version", "")
    return info


def firmware_in_range(firmware: str, fw_range: List[str]) -> Optional[bool]:
    """Firmware `7.5.0.1.129` within the driver's `[7.0.0,7.7.99]`? None when either is unknown."""
    from npu_graph_skill.doctor.compat import version_key

    if not firmware or len(fw_range) != 2:
        return None
    key = version_key(firmware)[:3]
    low, high = version_key(fw_range[0])[:3], version_key(fw_range[1])[:3]
    if not key or not low or not high:
        return None
    return low <= key <= high


SMI_PLACES = ("/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi", "/usr/bin/npu-smi")


def find_npu_smi(environ: Mapping[str, str], places: Tuple[str, ...] = SMI_PLACES) -> str:
    import shutil

    found = shutil.which("npu-smi", path=environ.get("PATH", os.defpath))
    if found:
        return found
    for place in places:
        if os.path.isfile(place) and os.access(place, os.X_OK):
            return place
    return ""
