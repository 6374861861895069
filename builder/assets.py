"""The browser side's build step: Pyodide copied in, the editor and the search library bundled.

Pyodide comes from the npm package `pyodide` (pinned in package.json) and is served from the
book's own folder, `_site/pyodide/`, so the book works offline and no request leaves the reader's
machine. The editor (CodeMirror 6) is bundled by esbuild into one file that a page loads only
when the reader first edits, so it does not count toward the bytes before Python.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .errors import ToolError

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "node_modules"

# What the worker needs from the npm package: the loader, the runtime, the standard library and
# the lock file loadPyodide reads. The HTML consoles, type files and source maps stay behind.
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json", "package.json")

EDITOR_ENTRY = ROOT / "site" / "editor" / "editor.js"
EDITOR_BUNDLE = Path("assets") / "js" / "editor.bundle.js"
# MiniSearch, for the search box: loaded the first time a reader searches (site/js/search.js).
SEARCH_ENTRY = Path("minisearch") / "dist" / "es" / "index.js"
SEARCH_BUNDLE = Path("assets") / "js" / "minisearch.bundle.js"


class AssetError(ToolError):
    """A browser asset could not be made; the message says which and what to run."""


def copy_pyodide(out: Path, node_modules: Path = NODE_MODULES) -> list[Path]:
    """Copy Pyodide's runtime files into `out/pyodide/`; returns the files written."""
    source = node_modules / "pyodide"
    missing = [name for name in PYODIDE_FILES if not (source / name).exists()]
    if missing:
        raise AssetError(f"{source}: missing {', '.join(missing)}; run `npm ci` (or `make setup`)")
    target = out / "pyodide"
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name in PYODIDE_FILES:
        destination = target / name
        if not _same(source / name, destination):
            shutil.copy2(source / name, destination)
        written.append(destination)
    return written


def bundle(entry: Path, out: Path, target: Path, node_modules: Path = NODE_MODULES) -> Path:
    """Bundle the ES module `entry` with esbuild, minified, into `out/target`."""
    esbuild = node_modules / ".bin" / "esbuild"
    if not esbuild.exists():
        raise AssetError(f"{esbuild}: not found; run `npm ci` (or `make setup`)")
    if not entry.exists():
        raise AssetError(f"{entry}: not found; run `npm ci` (or `make setup`)")
    bundled = out / target
    bundled.parent.mkdir(parents=True, exist_ok=True)
    command = [str(esbuild), str(entry), "--bundle", "--format=esm", "--minify",
               "--log-level=warning", f"--outfile={bundled}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        shown = entry.relative_to(ROOT) if entry.is_relative_to(ROOT) else entry
        raise AssetError(f"{shown}: esbuild failed:\n{done.stderr.strip()}")
    return bundled


def bundle_editor(out: Path, node_modules: Path = NODE_MODULES) -> Path:
    """Bundle the CodeMirror entry into `out/assets/js/editor.bundle.js`."""
    return bundle(EDITOR_ENTRY, out, EDITOR_BUNDLE, node_modules)


def bundle_search(out: Path, node_modules: Path = NODE_MODULES) -> Path:
    """Bundle MiniSearch into `out/assets/js/minisearch.bundle.js`."""
    return bundle(node_modules / SEARCH_ENTRY, out, SEARCH_BUNDLE, node_modules)


def build(out: Path) -> None:
    """Everything the page's Python and editor need in the built site `out`."""
    copy_pyodide(out)
    bundle_editor(out)
    bundle_search(out)


def _same(a: Path, b: Path) -> bool:
    """True when `b` already is a copy of `a` (same size and modification time)."""
    if not b.exists():
        return False
    sa, sb = a.stat(), b.stat()
    return sa.st_size == sb.st_size and int(sa.st_mtime) == int(sb.st_mtime)
