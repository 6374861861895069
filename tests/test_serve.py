"""site/serve.py, run as the reader runs it: a subprocess, over a small book in a temp folder.

What the page needs from it: COOP/COEP on every response (or no interrupt buffer), the right
MIME types for .wasm and .mjs (or no Pyodide), 127.0.0.1 only, the port asked for, and one clear
line when that port is taken."""
from __future__ import annotations

import gzip
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVE = ROOT / "site" / "serve.py"
sys.path.insert(0, str(ROOT / "site"))
import serve  # noqa: E402

FILES = {
    "index.html": "<!doctype html><title>map</title><p>the course map</p>",
    "lesson-11.html": "<!doctype html><title>11</title><p>Pull the plug</p>",
    "course.json": '{"build": "abc", "pages": []}',
    "assets/js/main.js": "export const x = 1;\n",
    "pyodide/pyodide.mjs": "export const loadPyodide = 1;\n",
    "pyodide/pyodide.asm.wasm": b"\0asm\x01\0\0\0",
    "pyodide/python_stdlib.zip": b"PK\x05\x06" + bytes(18),
    "py/lab/__init__.py": "X = 1\n",
}


@pytest.fixture
def book(tmp_path) -> Path:
    for name, content in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return tmp_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_line(stream, timeout: float = 10.0) -> str:
    """The next line of `stream`, or "" once `timeout` seconds pass without one."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return ""


@contextmanager
def running(book: Path, *args: str, env: dict | None = None):
    """serve.py on `book` as a subprocess; yields (process, the URL it printed)."""
    process = subprocess.Popen([sys.executable, str(SERVE), "--dir", str(book), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, **(env or {})})
    try:
        line = read_line(process.stdout)
        assert line.startswith("The book is at http://127.0.0.1:"), (
            f"serve.py printed {line!r}; stderr: {process.stderr.read() if process.poll() is not None else ''}")
        yield process, line.split()[4]
    finally:
        process.terminate()
        process.wait(timeout=10)


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers, response.read()


def test_every_response_carries_the_isolation_headers(book):
    with running(book, "--no-browser", "--port", str(free_port())) as (_, url):
        for path in ("", "lesson-11.html", "pyodide/pyodide.asm.wasm", "course.json"):
            status, headers, _ = get(url + path)
            assert status == 200, path
            assert headers["Cross-Origin-Opener-Policy"] == "same-origin", path
            assert headers["Cross-Origin-Embedder-Policy"] == "require-corp", path
            assert headers["Cross-Origin-Resource-Policy"] == "same-origin", path
        with pytest.raises(urllib.error.HTTPError) as missing:
            get(url + "lesson-99.html")
        assert missing.value.code == 404
        assert missing.value.headers["Cross-Origin-Embedder-Policy"] == "require-corp"


@pytest.mark.parametrize("path, mime", [
    ("pyodide/pyodide.asm.wasm", "application/wasm"),
    ("pyodide/pyodide.mjs", "text/javascript"),
    ("assets/js/main.js", "text/javascript"),
    ("lesson-11.html", "text/html"),
    ("course.json", "application/json"),
    ("pyodide/python_stdlib.zip", "application/zip"),
    ("py/lab/__init__.py", "text/plain"),
])
def test_mime_types(book, path, mime):
    with running(book, "--no-browser", "--port", str(free_port())) as (_, url):
        status, headers, body = get(url + path)
    assert status == 200
    assert headers["Content-Type"].split(";")[0] == mime
    content = FILES[path]
    assert body == (content if isinstance(content, bytes) else content.encode())


def test_text_is_gzipped_for_a_browser_that_accepts_it(book):
    (book / "lesson-11.html").write_text("<p>Pull the plug</p>\n" * 500)
    with running(book, "--no-browser", "--port", str(free_port())) as (_, url):
        def fetch(path, encoding):
            request = urllib.request.Request(url + path, headers={"Accept-Encoding": encoding})
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.headers, response.read()
        headers, body = fetch("lesson-11.html", "gzip, deflate")
        assert headers["Content-Encoding"] == "gzip"
        assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
        assert gzip.decompress(body) == (book / "lesson-11.html").read_bytes()
        assert len(body) < (book / "lesson-11.html").stat().st_size / 10
        headers, body = fetch("", "gzip")            # the root is index.html, compressed too
        assert gzip.decompress(body) == FILES["index.html"].encode()
        headers, body = fetch("lesson-11.html", "identity")
        assert headers["Content-Encoding"] is None and body.startswith(b"<p>Pull")
        headers, body = fetch("pyodide/pyodide.asm.wasm", "gzip")   # binary goes as it is
        assert headers["Content-Encoding"] is None and body == FILES["pyodide/pyodide.asm.wasm"]


def test_the_root_is_the_course_map(book):
    with running(book, "--no-browser", "--port", str(free_port())) as (_, url):
        assert get(url)[2] == FILES["index.html"].encode()


def test_it_listens_on_127_0_0_1_only(book):
    port = free_port()
    with running(book, "--no-browser", "--port", str(port)) as (_, url):
        assert url == f"http://127.0.0.1:{port}/"
        assert get(url)[0] == 200
        # Every 127.x address is this machine; a server bound to all interfaces answers on
        # 127.0.0.2 too, one bound to 127.0.0.1 does not.
        if sys.platform.startswith("linux"):
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.2", port), timeout=5).close()
        other = outward_address()
        if other:
            with pytest.raises(OSError):
                socket.create_connection((other, port), timeout=5).close()


def outward_address() -> str | None:
    """This machine's address on its network, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_port_option_is_used_and_printed(book):
    port = free_port()
    with running(book, "--no-browser", "--port", str(port)) as (_, url):
        assert url == f"http://127.0.0.1:{port}/"
        assert get(f"http://127.0.0.1:{port}/course.json")[0] == 200


def test_a_busy_port_is_one_clear_line(book):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run([sys.executable, str(SERVE), "--dir", str(book), "--no-browser",
                               "--port", str(port)], capture_output=True, text=True, timeout=20)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (f"serve.py: port {port} on 127.0.0.1 is already in use (another server, or "
                           "this book already running?); stop it, or choose another port with --port N\n")


def test_without_a_port_it_falls_back_when_the_usual_one_is_busy(book):
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", serve.BOOK_PORT))
        holder.listen()
    except OSError:  # somebody else holds it already: the same situation
        pass
    try:
        with running(book, "--no-browser") as (process, url):
            assert url != f"http://127.0.0.1:{serve.BOOK_PORT}/"
            assert get(url)[0] == 200
            port = url.rstrip("/").rsplit(":", 1)[1]
            assert read_line(process.stderr) == (
                f"serve.py: port {serve.BOOK_PORT} is busy, so this time the book is on port {port}; "
                "work saved at the usual address is not visible here\n")
    finally:
        holder.close()


def test_a_folder_without_a_book_is_refused(tmp_path):
    done = subprocess.run([sys.executable, str(SERVE), "--dir", str(tmp_path), "--no-browser",
                           "--port", str(free_port())], capture_output=True, text=True, timeout=20)
    assert done.returncode == 1
    assert done.stderr == f"serve.py: {tmp_path.resolve()} has no index.html; build the book first (make build)\n"


@pytest.mark.skipif(sys.platform == "win32", reason="the fake browser is a shell script")
@pytest.mark.parametrize("flag", [False, True])
def test_it_opens_the_browser_unless_told_not_to(book, tmp_path, flag):
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\necho "$1" > "{opened}"\n')
    fake.chmod(0o755)
    args = ["--port", str(free_port())] + (["--no-browser"] if flag else [])
    with running(book, *args, env={"BROWSER": str(fake)}) as (_, url):
        # serve.py opens the browser 0.3 s after it starts; not opening it is waited for 1.5 s,
        # opening it for as long as 5 s on a busy machine.
        deadline = time.monotonic() + (1.5 if flag else 5)
        # The shell makes the file before it writes the line: wait for the line.
        while not (opened.exists() and opened.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.1)
    if flag:
        assert not opened.exists()
    else:
        assert opened.read_text().strip() == url
