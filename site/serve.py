#!/usr/bin/env python3
"""Serve the book on 127.0.0.1, with the headers its pages need.

The same file serves the book while you write it (`make serve`) and the downloaded book
(`python3 serve.py` in the unzipped folder). Standard library only.

Cross-origin isolation (COOP/COEP) lets the page stop runaway Python with Pyodide's interrupt
buffer instead of killing the worker; .wasm and .mjs need their proper MIME types.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import socket
import sys
import threading
import webbrowser
from pathlib import Path

HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-cache",
}

TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".zip": "application/zip",
    ".py": "text/plain; charset=utf-8",
}


class BookHandler(http.server.SimpleHTTPRequestHandler):
    """A static file handler that adds the book's headers and keeps quiet unless asked."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}
    verbose = False

    def end_headers(self) -> None:
        for name, value in HEADERS.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        if self.verbose:
            super().log_message(format, *args)


def make_server(root: Path, port: int = 0, verbose: bool = False) -> http.server.ThreadingHTTPServer:
    """A server for `root` on 127.0.0.1:`port` (0: any free port). Not started."""
    handler = functools.partial(BookHandler, directory=str(root))
    handler.func.verbose = verbose
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the book on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port to use (default: a free one)")
    parser.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent,
                        help="folder to serve (default: the folder this file is in)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    root = args.dir.resolve()
    if not (root / "index.html").exists():
        print(f"serve.py: {root} has no index.html; build the book first (make build)", file=sys.stderr)
        return 1
    try:
        server = make_server(root, args.port, args.verbose)
    except OSError as error:
        print(f"serve.py: cannot listen on 127.0.0.1:{args.port}: {error.strerror}", file=sys.stderr)
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
