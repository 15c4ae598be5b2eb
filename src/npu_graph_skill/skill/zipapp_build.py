"""Build `npu-graph.pyz`: the whole tool in one file that runs on any Python 3.9+ with nothing installed.

The archive is a PEP 441 zip application (shebang + zip, what `zipapp` writes) holding the
`npu_graph_skill` package with its data files and PyYAML's pure-Python modules (its C extension is
left out; PyYAML falls back to pure Python by itself). Entries are sorted and time-stamped with a
fixed date, so one version always builds the same bytes and reinstalling does not rewrite it.

At start the archive unpacks itself once into a cache folder keyed by its content, and runs from
there: modules that read their data through `__file__`, and helper subprocesses that import the
package, then work as they do in a normal install.
"""
from __future__ import annotations

import hashlib
import io
import os
import zipfile
from typing import Dict, Iterator, Tuple

FIXED_TIME = (2020, 1, 1, 0, 0, 0)
SKIP_DIRS = {"__pycache__", ".pytest_cache"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dylib", ".egg-info")
INTERPRETER = "/usr/bin/env python3"

BOOTSTRAP = '''"""npu-graph.pyz: unpack once into a cache folder, then run the npu-graph command line."""
import os
import sys

BUILD_ID = "{build_id}"


def _cache_roots():
    explicit = os.environ.get("NPU_GRAPH_PYZ_CACHE")
    if explicit:
        yield explicit
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        yield os.path.join(base, "npu-graph-skill")
    import tempfile  # only when the first choice is not usable

    user = str(os.getuid()) if hasattr(os, "getuid") else "0"
    yield os.path.join(tempfile.gettempdir(), "npu-graph-skill-" + user)


def _unpack(archive):
    """The unpacked folder for this build, unpacking it first when needed; None when nowhere is writable."""
    for root in _cache_roots():
        target = os.path.join(root, "pyz-" + BUILD_ID)
        if os.path.isfile(os.path.join(target, ".complete")):
            return target
        try:
            import shutil
            import tempfile
            import zipfile

            os.makedirs(root, exist_ok=True)
            staging = tempfile.mkdtemp(prefix=".unpack-", dir=root)
            with zipfile.ZipFile(archive) as bundle:
                bundle.extractall(staging)
            open(os.path.join(staging, ".complete"), "w").close()
            try:
                os.rename(staging, target)  # atomic; another process may have won the race
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
            if os.path.isfile(os.path.join(target, ".complete")):
                return target
        except OSError:
            continue
    return None


def main():
    archive = os.path.dirname(os.path.abspath(__file__))
    unpacked = _unpack(archive)
    if unpacked:
        sys.path.insert(0, unpacked)
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (unpacked, os.environ.get("PYTHONPATH")) if p)
    else:  # no writable folder anywhere: run from the archive itself
        sys.path.insert(0, archive)
    from npu_graph_skill.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
'''


def _package_files(package_dir: str, prefix: str, python_only: bool = False) -> Iterator[Tuple[str, str]]:
    """(archive name, path on disk) for every file of a package, skipping caches and binaries."""
    for dirpath, dirnames, filenames in os.walk(package_dir):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for filename in sorted(filenames):
            if filename.startswith(".") or filename.endswith(SKIP_SUFFIXES):
                continue
            if python_only and not filename.endswith(".py"):
                continue
            full = os.path.join(dirpath, filename)
            rel = os.path.relpath(full, package_dir).replace(os.sep, "/")
            yield f"{prefix}/{rel}", full


def collect_sources() -> Dict[str, bytes]:
    """The files that go into the archive, by archive name."""
    import yaml

    import npu_graph_skill

    entries: Dict[str, bytes] = {}
    sources = list(_package_files(os.path.dirname(npu_graph_skill.__file__), "npu_graph_skill"))
    sources += list(_package_files(os.path.dirname(yaml.__file__), "yaml", python_only=True))
    for name, path in sources:
        with open(path, "rb") as handle:
            entries[name] = handle.read()
    licence = _pyyaml_licence() or _read(os.path.join(os.path.dirname(os.path.dirname(npu_graph_skill.__file__)),
                                                       "licenses", "PyYAML-LICENSE"))  # rebuilt from an unpacked zipapp
    if licence:
        entries["licenses/PyYAML-LICENSE"] = licence
    return entries


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _pyyaml_licence() -> bytes:
    try:
        from importlib import metadata

        for file in metadata.distribution("PyYAML").files or []:
            if os.path.basename(str(file)).upper().startswith("LICENSE"):
                return file.read_binary() if hasattr(file, "read_binary") else file.locate().read_bytes()
    except Exception:  # noqa: BLE001 - the licence is a courtesy copy; its absence is not an error
        return b""
    return b""


def build_zipapp(entries: Dict[str, bytes] = None) -> bytes:
    """The archive as bytes (shebang line + deflated zip, reproducible)."""
    entries = entries if entries is not None else collect_sources()
    digest = hashlib.sha256()
    for name in sorted(entries):
        digest.update(name.encode() + b"\0" + hashlib.sha256(entries[name]).digest())
    build_id = digest.hexdigest()[:16]
    files = dict(entries)
    files["__main__.py"] = BOOTSTRAP.replace("{build_id}", build_id).encode("utf-8")
    buffer = io.BytesIO()
    buffer.write(f"#!{INTERPRETER}\n".encode("utf-8"))
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name])
    return buffer.getvalue()


def write_zipapp(path: str) -> int:
    """Build and write atomically; returns the size in bytes."""
    from npu_graph_skill.skill.install import atomic_write

    data = build_zipapp()
    atomic_write(path, data)
    os.chmod(path, 0o755)
    return len(data)
