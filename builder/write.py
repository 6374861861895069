"""Stage 5, write: put the built site in place all at once.

Everything is written into a fresh folder next to the target, and only when all of it is there is
it swapped in for the old site. A build that fails at any point before the swap leaves the old
site exactly as it was, and a reader (or a running `make serve`) never sees half a book."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

Content = bytes | str | Path


def _bytes(content: Content) -> bytes:
    if isinstance(content, Path):
        return content.read_bytes()
    return content.encode("utf-8") if isinstance(content, str) else content


def content_hash(files: dict[str, Content]) -> str:
    """A short hash of every file's name and bytes: the build id in course.json."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode("utf-8") + b"\0" + _bytes(files[name]) + b"\0")
    return digest.hexdigest()[:16]


def write_site(out: Path, files: dict[str, Content],
               finish: Callable[[Path], None] | None = None) -> int:
    """Write `files` ({relative path: content}) as the folder `out`, replacing it whole.

    `finish(folder)` runs on the new folder before the swap (the browser assets are added
    there). Returns the number of files written."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f"{out.name}.new-", dir=out.parent))
    try:
        for name, content in files.items():
            target = fresh / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copyfile(content, target)
            else:
                target.write_bytes(_bytes(content))
        if finish is not None:
            finish(fresh)
        fresh.chmod(0o755)
        old = None
        if out.exists():
            old = out.parent / f"{out.name}.old-{os.getpid()}-{time.time_ns()}"
            out.rename(old)
        fresh.rename(out)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return len(files)
