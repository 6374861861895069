"""builder/dist.py and builder/offline.py over a small book assembled in a temp folder, and the real
book's zip: one top folder, every file, a serve.py that serves the unzipped folder, an offline list
that names every file with its hash, and lab folders that run under CPython."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

from builder import dist, offline  # noqa: E402
from test_serve import free_port, get, read_line  # noqa: E402

SMALL = {
    "index.html": "<!doctype html><title>map</title>",
    "lesson-11.html": "<!doctype html><title>11</title><p>Pull the plug</p>",
    "course.json": json.dumps({"build": "c0ffee", "pages": []}),
    "assets/js/main.js": "export {};\n",
    "assets/css/book.css": "body { margin: 0 }\n",
    "pyodide/pyodide.asm.wasm": b"\0asm\x01\0\0\0" + bytes(range(256)) * 40,
    "downloads/lesson-11/harness.py": "# the starting file\n",
    "downloads/lesson-11/tests.py": "import unittest\n",
    "downloads/lesson-11/lab/__init__.py": "",
    "py/lab/__pycache__/x.cpython-311.pyc": b"\0junk",
    ".DS_Store": b"\0junk",
}


def assemble(root: Path, files: dict = SMALL) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


@pytest.fixture
def small(tmp_path) -> Path:
    return assemble(tmp_path / "site")


def members(zip_path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(zip_path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def test_one_top_folder_named_for_the_build(small, tmp_path):
    target = dist.make_zip(small, tmp_path / "dist")
    build = json.loads((small / "precache.json").read_text())["build"]
    assert target.name == f"agent-harness-book-{build}.zip"
    tops = {name.split("/")[0] for name in members(target)}
    assert tops == {f"agent-harness-book-{build}"}


def test_every_file_is_in_the_zip_with_its_bytes(small, tmp_path):
    target = dist.make_zip(small, tmp_path / "dist")
    inside = members(target)
    top = target.stem + "/"
    for name, content in SMALL.items():
        if "__pycache__" in name or name.startswith("."):
            assert top + name not in inside, name
            continue
        assert inside[top + name] == (content if isinstance(content, bytes) else content.encode()), name
    assert inside[top + "serve.py"] == (ROOT / "site" / "serve.py").read_bytes()
    assert inside[top + "sw.js"] == (small / "sw.js").read_bytes()
    assert inside[top + "precache.json"] == (small / "precache.json").read_bytes()
    assert b"python3 serve.py" in inside[top + "README.txt"]


def test_serve_py_is_executable_in_the_zip(small, tmp_path):
    target = dist.make_zip(small, tmp_path / "dist")
    with zipfile.ZipFile(target) as archive:
        info = archive.getinfo(target.stem + "/serve.py")
    assert (info.external_attr >> 16) & 0o111 == 0o111


def test_the_offline_list_names_every_file_with_its_hash(small):
    precache = offline.write_precache(small)
    manifest = json.loads((small / "precache.json").read_text())
    expected = {name for name in SMALL if "__pycache__" not in name and not name.startswith(".")}
    assert set(manifest["files"]) == expected
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((small / name).read_bytes()).hexdigest() == digest, name
    assert manifest["build"] == precache.build
    assert manifest["course_build"] == "c0ffee"
    assert manifest["bytes"] == sum((small / name).stat().st_size for name in expected)
    worker = (small / "sw.js").read_text()
    assert f'const BUILD = "{precache.build}";' in worker
    assert 'const BUILD = "dev";' not in worker


def test_the_build_id_follows_every_file(small):
    first = offline.write_precache(small).build
    assert offline.write_precache(small).build == first  # nothing changed, the worker neither
    (small / "pyodide" / "pyodide.asm.wasm").write_bytes(b"\0asm another runtime")
    second = offline.write_precache(small).build
    assert second != first
    (small / "assets" / "js" / "new.js").write_text("export {};\n")
    assert offline.write_precache(small).build not in (first, second)


def test_the_worker_source_must_have_its_placeholder(small, tmp_path):
    broken = tmp_path / "sw.js"
    broken.write_text("const BUILD = 'dev';\n")
    with pytest.raises(ValueError) as caught:
        offline.write_precache(small, broken)
    assert str(caught.value) == f"{broken}: needs exactly one line `{offline.PLACEHOLDER}` to stamp the build into"


def test_the_zip_is_the_same_bytes_for_the_same_site_and_dist_holds_one(small, tmp_path):
    out = tmp_path / "dist"
    first = dist.make_zip(small, out)
    first_bytes = first.read_bytes()
    assert dist.make_zip(small, out).read_bytes() == first_bytes
    (small / "lesson-11.html").write_text("<!doctype html><p>a new build</p>")
    second = dist.make_zip(small, out)
    assert second != first
    assert list(out.glob("*.zip")) == [second]


def test_a_site_that_was_not_built_is_refused(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("x")
    with pytest.raises(dist.DistError) as caught:
        dist.make_zip(tmp_path / "site", tmp_path / "dist")
    said = f"{tmp_path / 'site' / 'course.json'}: missing; build the book first (make build)"
    assert str(caught.value) == said
    done = subprocess.run([sys.executable, "-m", "builder.dist", "--site", str(tmp_path / "site"),
                           "--out", str(tmp_path / "dist")], cwd=ROOT, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (1, f"builder.dist: {said}\n")


def test_the_unzipped_serve_py_serves_its_own_folder(small, tmp_path):
    target = dist.make_zip(small, tmp_path / "dist")
    unzipped = tmp_path / "unzipped"
    with zipfile.ZipFile(target) as archive:
        archive.extractall(unzipped)
    book = unzipped / target.stem
    port = free_port()
    process = subprocess.Popen([sys.executable, "serve.py", "--no-browser", "--port", str(port)],
                               cwd=book, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert read_line(process.stdout) == f"The book is at http://127.0.0.1:{port}/  (Ctrl+C stops it)\n"
        status, headers, body = get(f"http://127.0.0.1:{port}/lesson-11.html")
        assert body == SMALL["lesson-11.html"].encode()
        assert headers["Content-Type"].startswith("text/html")
        assert get(f"http://127.0.0.1:{port}/pyodide/pyodide.asm.wasm")[1]["Content-Type"] == "application/wasm"
        assert get(f"http://127.0.0.1:{port}/sw.js")[0] == 200
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_main_prints_the_zip_and_its_size(small, tmp_path):
    done = subprocess.run([sys.executable, "-m", "builder.dist", "--site", str(small), "--out",
                           str(tmp_path / "dist")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (target,) = (tmp_path / "dist").glob("*.zip")
    assert f"{target.stat().st_size} bytes" in done.stdout
    assert f"{len(members(target))} files" in done.stdout
