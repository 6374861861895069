"""`python -m builder.dist`: the whole book as one zip, to study with the network gone.

The zip holds one folder, `agent-harness-book-<build>/`: the built site (every page, Pyodide, the
editor bundle, every lab's folder under downloads/), the offline list and service worker, a copy of
site/serve.py and a short README.txt. Unzipped anywhere, `python3 serve.py` in that folder serves
it. The folder is named for the build so a newer download never unzips over an older one, and the
zip is byte-for-byte the same for the same site (fixed times, sorted names), so its size and hash
can be compared from build to build.
"""
from __future__ import annotations

import argparse
import os
import sys
import zipfile
from pathlib import Path

from builder.errors import ToolError

from builder.offline import MANIFEST, WORKER, site_files, write_precache

ROOT = Path(__file__).resolve().parents[1]
TITLE = "Build an agent harness"
NAME = "agent-harness-book"
SERVER = ROOT / "site" / "serve.py"
STAMP = (1980, 1, 1, 0, 0, 0)  # the zip format's first day: no build time leaks into the bytes

README = """\
{title}
{underline}

Build {build}. Everything here runs on your machine; nothing is fetched from the internet.

To study with code that runs: open a terminal in this folder and type

    python3 serve.py

(on Windows: py serve.py). It serves the book on 127.0.0.1 and opens your browser.
Options: --port N to choose the port, --no-browser to only print the address.
Keep using the same port: your browser keeps saved work per address.
After the first visit the whole book is saved in the browser, so pages and cells keep working
even when serve.py is stopped and you are offline.

Opening index.html directly (file://) works for reading; code runs only when served.

Each lesson's lab folder is in downloads/lesson-NN/. It runs under Python 3.10 or newer, e.g.

    cd downloads/lesson-11
    python3 lab/lab_check.py --harness harness.py --lesson 11 tests.py
"""


class DistError(ToolError):
    """The site cannot be packed; the message names the file and what to run."""


def make_zip(site_dir: Path, out_dir: Path, server: Path = SERVER) -> Path:
    """Pack `site_dir` (a built book) into `out_dir/agent-harness-book-<build>.zip`.

    Refreshes the site's offline list first, so the zip's sw.js and precache.json always describe
    the files beside them. Older book zips in `out_dir` are removed: it holds one book."""
    site_dir, out_dir = Path(site_dir), Path(out_dir)
    for needed in ("index.html", "course.json"):
        if not (site_dir / needed).exists():
            raise DistError(f"{site_dir / needed}: missing; build the book first (make build)")
    precache = write_precache(site_dir)
    build = precache.build
    top = f"{NAME}-{build}"
    title = TITLE
    entries: list[tuple[str, bytes, int]] = []
    for path in site_files(site_dir) + [site_dir / WORKER, site_dir / MANIFEST]:
        entries.append((path.relative_to(site_dir).as_posix(), path.read_bytes(), 0o644))
    entries.append(("serve.py", server.read_bytes(), 0o755))
    entries.append(("README.txt", README.format(title=title, underline="=" * len(title), build=build).encode(), 0o644))
    entries.sort()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{top}.zip"
    partial = target.with_suffix(".zip.partial")
    with zipfile.ZipFile(partial, "w") as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(f"{top}/{name}", date_time=STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | mode) << 16
            info.create_system = 3  # unix, so the modes above are honoured by unzip
            archive.writestr(info, data, compresslevel=9)
    for old in out_dir.glob(f"{NAME}-*.zip"):
        if old != target:
            old.unlink()
    os.replace(partial, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m builder.dist", description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_site", help="the built site (default: _site)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where the zip goes (default: dist)")
    args = parser.parse_args(argv)
    try:
        target = make_zip(args.site, args.out)
    except DistError as error:
        print(f"builder.dist: {error}", file=sys.stderr)
        return 1
    size = target.stat().st_size
    with zipfile.ZipFile(target) as archive:
        count = len(archive.infolist())
    shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
    print(f"{shown}: {count} files, {size} bytes ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
