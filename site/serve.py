#!/usr/bin/env python3
"""Serve the book on 127.0.0.1, with the headers its pages need.

The same file serves the book while you write it (`make serve`) and the downloaded book
(`python3 serve.py` in the unzipped folder). Standard library only, Python 3.8 or newer.

Cross-origin isolation (COOP/COEP) lets the page stop runaway Python with Pyodide's interrupt
buffer instead of killing the worker; .wasm and .mjs need their proper MIME types, and the table
below is used before the operating system's (which on some machines maps .js to text/plain).

Without --port the server first tries one fixed port, BOOK_PORT, and only then any free one: the
browser keeps saved work and the offline copy per address (host and port), so the same address
every time means the same saved work every time.
"""
from __future__ import annotations

import argparse
import errno
import functools
import gzip
import http.server
import io
import sys
import threading
import webbrowser
from pathlib import Path

BOOK_PORT = 8417

HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-cache",
}

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".woff2": "font/woff2",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".py": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}


# Text compresses about sevenfold, and a lesson page is mostly highlighted code. Pyodide's .wasm
# and its stdlib zip are left alone: the zip is compressed already, and on 127.0.0.1 squeezing
# 10 MB on every first visit would cost more time than it saves.
COMPRESSIBLE = {".html", ".css", ".js", ".mjs", ".json", ".map", ".svg", ".py", ".txt", ".md"}


@functools.lru_cache(maxsize=256)
def gzipped(path: str, mtime_ns: int, size: int) -> bytes:
    """The file at `path`, gzip-compressed; cached for as long as the file does not change."""
    return gzip.compress(Path(path).read_bytes(), compresslevel=6, mtime=0)


class BookHandler(http.server.SimpleHTTPRequestHandler):
    """A static file handler that adds the book's headers, sends text gzip-compressed to a
    browser that accepts it, and keeps quiet unless asked."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}
    verbose = False

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?")[0].endswith("/"):
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.suffix in COMPRESSIBLE and path.is_file()):
            return super().send_head()
        stat = path.stat()
        body = gzipped(str(path), stat.st_mtime_ns, stat.st_size)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        self.end_headers()
        return io.BytesIO(body)

    def send_error(self, code, message=None, explain=None) -> None:
        """A missing file gets the book's own 404 page (with a way back), when the book has one."""
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def end_headers(self) -> None:
        for name, value in HEADERS.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        if self.verbose:
            super().log_message(format, *args)


class BookServer(http.server.ThreadingHTTPServer):
    """The threading server, bound to 127.0.0.1 only, that refuses a port somebody else holds.

    On Windows SO_REUSEADDR lets a second server bind a port that is already listening, so there
    it is left off; elsewhere it only lets a restart reuse a port in TIME_WAIT. A browser that
    drops a connection (a reload mid-download) is normal, not an error worth a traceback."""

    daemon_threads = True
    allow_reuse_address = sys.platform != "win32"

    def handle_error(self, request, client_address) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)


def make_server(root: Path, port: int = 0, verbose: bool = False) -> BookServer:
    """A server for `root` on 127.0.0.1:`port` (0: any free port). Not started.

    Raises OSError when the port cannot be had (errno EADDRINUSE when it is busy)."""
    handler = functools.partial(BookHandler, directory=str(root))
    handler.func.verbose = verbose
    return BookServer(("127.0.0.1", port), handler)


def bind_error(port: int, error: OSError) -> str:
    """The one line that says why `port` could not be had, and what to do about it."""
    if error.errno == errno.EADDRINUSE or getattr(error, "winerror", None) == 10048:
        return (f"serve.py: port {port} on 127.0.0.1 is already in use (another server, or this "
                f"book already running?); stop it, or choose another port with --port N")
    if error.errno in (errno.EACCES, errno.EPERM):
        return f"serve.py: not allowed to listen on 127.0.0.1:{port}; choose a port above 1023 with --port N"
    return f"serve.py: cannot listen on 127.0.0.1:{port}: {error.strerror or error}"


def open_server(root: Path, port: int | None, verbose: bool) -> BookServer:
    """The server on `port`, or, when no port was asked for, on BOOK_PORT or else any free port."""
    if port is not None:
        return make_server(root, port, verbose)
    try:
        return make_server(root, BOOK_PORT, verbose)
    except OSError:
        server = make_server(root, 0, verbose)
        print(f"serve.py: port {BOOK_PORT} is busy, so this time the book is on port "
              f"{server.server_address[1]}; work saved at the usual address is not visible here",
              file=sys.stderr)
        return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the book on 127.0.0.1 and open it.")
    parser.add_argument("--port", type=int, default=None,
                        help=f"port to use (default: {BOOK_PORT}, or a free one if it is busy)")
    parser.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent,
                        help="folder to serve (default: the folder this file is in)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    root = args.dir.resolve()
    if not (root / "index.html").exists():
        print(f"serve.py: {root} has no index.html; build the book first (make build)", file=sys.stderr)
        return 1
    if args.port is not None and not 0 <= args.port <= 65535:
        print(f"serve.py: --port {args.port} is not a port number (0 to 65535)", file=sys.stderr)
        return 2
    try:
        server = open_server(root, args.port, args.verbose)
    except OSError as error:
        print(bind_error(args.port if args.port is not None else 0, error), file=sys.stderr)
        return 1
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"The book is at {url}  (Ctrl+C stops it)", flush=True)
    if not args.no_browser:
        threading.Timer(0.3, webbrowser.open, [url]).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
