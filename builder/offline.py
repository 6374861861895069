"""The offline copy's list: which files a browser must hold to run the book with no server.

`write_precache(site_dir)` is the build's last step. It writes `precache.json` (every file of the
built site with its SHA-256, and a build id made from all of them) and copies `site/sw.js` to the
site root with that id stamped in. The id changes whenever any file changes, Pyodide and scripts
included, not only the lessons (course.json's "build"); a changed sw.js is what makes a browser
install the new build, and the hashes are what let the worker refuse a file of another build.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER_SOURCE = ROOT / "site" / "sw.js"
WORKER = "sw.js"
MANIFEST = "precache.json"
PLACEHOLDER = 'const BUILD = "dev";'
# Not part of the offline copy: the worker itself (the browser keeps it), the list, and the
# downloaded book's own server, which a browser never asks for.
LEFT_OUT = {WORKER, MANIFEST, "serve.py"}


@dataclass(frozen=True)
class Precache:
    """What was written: the build id, every cached file (path relative to the site root, in URL
    form) with its SHA-256, and their total size."""

    build: str
    files: dict[str, str]
    bytes: int


def site_files(site_dir: Path) -> list[Path]:
    """Every file a reader's browser may ask for, sorted; hidden files and caches left out."""
    found = []
    for path in sorted(site_dir.rglob("*")):
        relative = path.relative_to(site_dir)
        if not path.is_file() or relative.as_posix() in LEFT_OUT:
            continue
        if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
            continue
        found.append(path)
    return found


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_precache(site_dir: Path, worker_source: Path = WORKER_SOURCE) -> Precache:
    """Write `site_dir/precache.json` and `site_dir/sw.js` for the site as it is now.

    Call it after every other file of the build is written. Idempotent: the same site gives the
    same id and the same two files."""
    site_dir = Path(site_dir)
    source = worker_source.read_text(encoding="utf-8")
    if source.count(PLACEHOLDER) != 1:
        raise ValueError(f"{worker_source}: needs exactly one line `{PLACEHOLDER}` to stamp the build into")
    files = {path.relative_to(site_dir).as_posix(): sha256(path) for path in site_files(site_dir)}
    total = sum((site_dir / name).stat().st_size for name in files)
    listing = "".join(f"{name} {digest}\n" for name, digest in files.items())
    build = hashlib.sha256((listing + source).encode()).hexdigest()[:16]
    manifest = {"build": build, "course_build": course_build(site_dir), "bytes": total, "files": files}
    (site_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    stamped = source.replace(PLACEHOLDER, f'const BUILD = "{build}";')
    (site_dir / WORKER).write_text(stamped, encoding="utf-8")
    return Precache(build=build, files=files, bytes=total)


def course_build(site_dir: Path) -> str | None:
    """course.json's "build" (the lessons' content hash), kept in the list for reference."""
    course = site_dir / "course.json"
    if not course.exists():
        return None
    return json.loads(course.read_text(encoding="utf-8")).get("build")
