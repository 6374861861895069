"""`make serve`: serve the book while you write it.

    python -m builder.devserve [--port 8000] [--out _site]

It builds the book, serves it on 127.0.0.1 as site/serve.py does, and watches `lessons/`, the
course's harness and `site/`. When a file changes it builds again; a page's cells are proven again
only when its source or the harness it imports changed (the others' recorded outputs are reused),
so saving one page is rebuilt in about a second. Every page it serves carries a small script that
asks the server for the build's state: the open page reloads when a build lands, and when a
build fails it shows the `lessons/<folder>/page.md:<line>: ...` error over the page instead of
leaving the old page up in silence. The service worker is not served: a page you are writing
must never come from a cache."""
from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
import threading
import time
import traceback
from pathlib import Path

from .errors import BuildError, ToolError
from .pipeline import build
from .project import Project

SITE = Path(__file__).resolve().parents[1] / "site"


def _serve_module():
    """site/serve.py, which ships alone in the zip and so is no package of ours."""
    spec = importlib.util.spec_from_file_location("book_serve", SITE / "serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


serve = _serve_module()

POLL_S = 0.25
RELOAD_JS = """
(() => {
  navigator.serviceWorker?.getRegistrations?.().then((all) => all.forEach((r) => r.unregister()));
  let seen = null;
  const show = (error) => {
    let box = document.getElementById("dev-error");
    if (!error) { box?.remove(); return; }
    if (!box) {
      box = document.createElement("pre");
      box.id = "dev-error";
      box.setAttribute("role", "alert");
      box.style.cssText = "position:fixed;inset:auto 0 0 0;z-index:99;margin:0;padding:1rem;" +
        "background:#7a1f1f;color:#fff;font:14px/1.4 monospace;white-space:pre-wrap";
      document.body.append(box);
    }
    box.textContent = "The book did not build:\\n" + error;
  };
  const poll = async () => {
    try {
      const state = await (await fetch("/__dev/state", { cache: "no-store" })).json();
      if (seen !== null && state.version !== seen && !state.error) location.reload();
      seen = state.version;
      show(state.error);
    } catch (error) { /* the server is restarting */ }
    setTimeout(poll, 400);
  };
  poll();
})();
"""
TAG = b'<script src="/__dev/reload.js"></script>'


class State:
    """The latest build: a version that moves on every build that lands, and the error of the
    latest build that failed (None once one succeeds again)."""

    def __init__(self) -> None:
        self.version, self.error, self.lock = 0, None, threading.Lock()

    def as_json(self) -> bytes:
        with self.lock:
            return json.dumps({"version": self.version, "error": self.error}).encode()


def make_handler(state: State):
    class DevHandler(serve.BookHandler):
        def send_head(self):
            route = self.path.split("?")[0]
            if route == "/__dev/state":
                return self._send(state.as_json(), "application/json")
            if route == "/__dev/reload.js":
                return self._send(RELOAD_JS.encode(), "text/javascript")
            if route == "/sw.js":
                self.send_error(404, "no service worker while writing")
                return None
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if path.suffix == ".html" and path.is_file():
                html = path.read_bytes().replace(b"</body>", TAG + b"</body>", 1)
                return self._send(html, "text/html; charset=utf-8")
            return super().send_head()

        def _send(self, body: bytes, kind: str):
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            return io.BytesIO(body)

    return DevHandler


def watched(project: Project) -> dict[Path, int]:
    """Every file whose change means a new build, with its modification time."""
    roots = [project.lessons, project.harness_source.parent, project.site, project.code]
    files = {}
    for root in roots:
        for path in root.rglob("*"):
            if "__pycache__" in path.parts:
                continue
            try:
                if path.is_file():
                    files[path] = path.stat().st_mtime_ns
            except FileNotFoundError:       # an editor's temporary file, gone between list and stat
                continue
    return files


def describe(error: BaseException) -> str:
    """One sentence for an error that is not ours (BuildError, ToolError): what it is, and the
    line of code it came from, so the overlay names a place rather than staying blank."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(error).__name__}: {error}{where}"


class Builder:
    """Builds on demand, keeping the cells' recorded outputs between builds."""

    def __init__(self, project: Project, out: Path, state: State) -> None:
        self.project, self.out, self.state = project, out, state
        self.cache: dict = {}

    def once(self, log=print, steps=None) -> bool:
        """Build once; `steps` (if given) hears each step of the build as it happens."""
        started = time.monotonic()
        try:
            build(self.project, self.out, cache=self.cache, log=steps or (lambda line: None))
        except Exception as error:          # noqa: BLE001 -- any failure is shown, and the watch goes on
            message = str(error) if isinstance(error, (BuildError, ToolError)) else describe(error)
            with self.state.lock:
                self.state.error = message
            log(f"build failed: {message}")
            return False
        with self.state.lock:
            self.state.version += 1
            self.state.error = None
        log(f"built in {time.monotonic() - started:.1f} s")
        return True


def watch(builder: Builder, stop: threading.Event) -> None:
    """Build again whenever a watched file changes; nothing a build raises ends the watch."""
    seen = watched(builder.project)
    while not stop.wait(POLL_S):
        try:
            now = watched(builder.project)
        except OSError as error:            # a folder renamed mid-walk: look again next time
            print(f"watch: {error}", flush=True)
            continue
        if now != seen:
            changed = sorted({p for p in set(now) ^ set(seen)} | {p for p in now if seen.get(p) != now[p]})
            print(f"changed: {', '.join(builder.project.rel(p) for p in changed[:3])}"
                  f"{' ...' if len(changed) > 3 else ''}", flush=True)
            seen = now
            if any(builder.project.code in p.parents for p in changed):
                builder.cache.clear()       # the runtime itself changed: prove every cell again
            builder.once()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m builder.devserve", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    project = Project.book()
    out = (args.out or project.root / "_site").resolve()
    state = State()
    builder = Builder(project, out, state)
    # The first build runs every cell of every page: say so, and show its steps as they happen,
    # so the minute it takes is not a silence.
    print(f"Building the book into {out} (the first build runs every cell of every page; "
          "about a minute, then the address of the book)...", flush=True)
    first = builder.once(steps=lambda line: print(f"  {line}", flush=True))
    if not first and not (out / "index.html").exists():
        print("devserve: the first build failed and there is no older site to serve; fix the "
              "source, then run again", file=sys.stderr)
        return 1
    try:
        server = serve.BookServer(("127.0.0.1", args.port),
                                  lambda *a, **k: make_handler(state)(*a, directory=str(out), **k))
    except OSError as error:
        print(serve.bind_error(args.port, error), file=sys.stderr)
        return 1
    stop = threading.Event()
    threading.Thread(target=watch, args=(builder, stop), daemon=True).start()
    print(f"The book is at http://127.0.0.1:{server.server_address[1]}/  (watching lessons/; "
          f"Ctrl+C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
