"""The page's Python, booted ahead of time: a memory snapshot made at build time.

Most of a cold Pyodide boot is Python initialising itself in wasm code that is not yet compiled
by the optimizing tier (../shared/reference/pyodide-boot.md). A snapshot taken after the book's
runtime is imported skips all of it: the worker restores the heap instead of booting. The build
makes it with Node from the site's own copy of Pyodide and py/ folder (builder/snapshot.mjs) and
writes it gzip-compressed as `py/snapshot.bin.gz`.

It is never stale: its name in the cache is a hash of everything it is made from (Pyodide's
files, the book's Python, the maker script), so changing any of them makes a new one, and an
unchanged book reuses the one it has (the cache is .cache/snapshot/ in the repository)."""
from __future__ import annotations

import gzip
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import ToolError

ROOT = Path(__file__).resolve().parents[1]
MAKER = Path(__file__).with_name("snapshot.mjs")
CACHE = ROOT / ".cache" / "snapshot"
TARGET = Path("py") / "snapshot.bin.gz"


TIMEOUT_S = 300


class SnapshotError(ToolError):
    """The snapshot could not be made; the message says why."""


def key(site: Path) -> str:
    """What the snapshot is made from, hashed: Pyodide's files, py/, the maker."""
    digest = hashlib.sha256(MAKER.read_bytes())
    for folder in (site / "pyodide", site / "py"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != TARGET.name:
                digest.update(path.relative_to(site).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:24]


def build(site: Path, cache: Path = CACHE) -> Path:
    """Put `py/snapshot.bin.gz` into the built `site`, from the cache or made afresh."""
    cached = cache / f"{key(site)}.bin.gz"
    if not cached.exists():
        node = shutil.which("node")
        if node is None:
            raise SnapshotError("node is not on PATH: the snapshot is made with Node")
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as folder:
            raw = Path(folder) / "snapshot.bin"
            try:
                done = subprocess.run([node, str(MAKER), str(site / "pyodide"), str(site / "py"),
                                       str(raw)], capture_output=True, text=True, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise SnapshotError(f"{MAKER.relative_to(ROOT)} did not finish in {TIMEOUT_S} s; "
                                    "the machine may be busy: build again") from None
            if done.returncode != 0 or not raw.exists():
                raise SnapshotError(f"{MAKER.relative_to(ROOT)} failed:\n{done.stderr.strip()[-2000:]}")
            partial = cached.with_suffix(".part")
            partial.write_bytes(gzip.compress(raw.read_bytes(), compresslevel=9, mtime=0))
            partial.replace(cached)
    target = site / TARGET
    shutil.copyfile(cached, target)
    return target
