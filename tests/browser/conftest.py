"""Fixtures for the browser tests: the built site served on 127.0.0.1, and Chromium driven by
Playwright. Every page fixture records each request and fails the test if one left 127.0.0.1.
Screenshots go to test-artifacts/, which the suite keeps."""
from __future__ import annotations

import re

import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "site"))

from builder.browser import FLAGS, find_browser, missing  # noqa: E402

ARTIFACTS = ROOT / "test-artifacts"
LOCAL_HOSTS = {"127.0.0.1"}


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built book. `make test` builds it first; a bare pytest run builds it here."""
    site = ROOT / "_site"
    if not (site / "course.json").exists():
        subprocess.run([sys.executable, str(ROOT / "build.py")], check=True, cwd=ROOT)
    return site


@pytest.fixture(scope="session")
def fixture_root():
    """Lesson 99 of tests/fixtures/browser (cells that misbehave), built once for the session by
    the real pipeline, Pyodide and the editor included."""
    from builder.pipeline import build
    from builder.project import Project
    with tempfile.TemporaryDirectory(prefix="book-fixture-") as folder:
        out = Path(folder) / "site"
        build(Project.at(ROOT / "tests" / "fixtures" / "browser"), out, log=lambda line: None)
        yield out


@pytest.fixture(scope="session")
def fixture_url(fixture_root):
    """lesson 99 served with the isolation headers. Tests share the server, never a profile."""
    from fixture_site import serving
    with serving(fixture_root) as url:
        yield url


@pytest.fixture(scope="session")
def base_url(site_dir):
    """The built book, served as site/serve.py serves it."""
    from fixture_site import serving
    with serving(site_dir) as url:
        yield url


@pytest.fixture(scope="session")
def playwright_instance():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser_path():
    path = find_browser()
    if path is None:
        pytest.fail(missing())
    return path


@pytest.fixture(scope="session")
def shared_browser(playwright_instance, browser_path):
    """One Chromium for the tests that need a fresh context but not a profile on disk: a context
    in a running browser opens in about a second, a browser with a profile of its own in three
    to six on a busy machine. A context shares nothing with another (storage, caches, service
    workers), so each test still starts from nothing."""
    browser = playwright_instance.chromium.launch(executable_path=browser_path, args=FLAGS, headless=True)
    yield browser
    browser.close()


class Profiles:
    """Opens Chromium contexts, each with a user-data dir of its own (or a given one, to reopen a
    profile after it was closed), or a fresh context in the shared browser (fresh()), and checks
    that no request leaves 127.0.0.1."""

    def __init__(self, playwright, browser_path, shared=None):
        self.playwright, self.browser_path, self.shared = playwright, browser_path, shared
        self.contexts, self.foreign = [], []
        self._tmp = tempfile.TemporaryDirectory(prefix="book-profiles-")

    def fresh(self, **options):
        """A new, empty context in the shared browser (no profile on disk to reopen)."""
        context = self.shared().new_context(**options)
        context.on("request", self._watch)
        self.contexts.append(context)
        return context

    def open(self, profile: Path | None = None, **options):
        if profile is None:
            profile = Path(tempfile.mkdtemp(dir=self._tmp.name))
        context = self.playwright.chromium.launch_persistent_context(
            str(profile), executable_path=self.browser_path, args=FLAGS, headless=True, **options)
        context.on("request", self._watch)
        self.contexts.append(context)
        return context

    def new_profile_dir(self) -> Path:
        return Path(tempfile.mkdtemp(dir=self._tmp.name))

    def _watch(self, request):
        url = urlparse(request.url)
        if url.scheme in ("http", "https", "ws", "wss") and url.hostname not in LOCAL_HOSTS:
            self.foreign.append(request.url)

    def close(self):
        for context in self.contexts:
            try:
                context.close()
            except Exception:  # already closed by the test
                pass
        self._tmp.cleanup()


@pytest.fixture
def profiles(playwright_instance, browser_path, request):
    # The shared browser is started by the first test that asks for a fresh context, not before.
    profiles = Profiles(playwright_instance, browser_path, lambda: request.getfixturevalue("shared_browser"))
    yield profiles
    profiles.close()
    assert profiles.foreign == [], f"requests left 127.0.0.1: {profiles.foreign}"


# A test module that never runs Python marks itself `pytestmark = pytest.mark.no_python`: its pages'
# requests for the interpreter's files are left unanswered (held, not refused, so nothing fails on
# the page), and no Pyodide boots beside the test on a 2-core machine.
PYTHON_FILES = re.compile(r"/(pyodide|py)/")


def pytest_configure(config):
    config.addinivalue_line("markers", "no_python: the test's pages never start Python (its files are refused)")


@pytest.fixture
def page(profiles, request):
    """A page in a fresh context of the shared browser. A test that reopens a profile after
    closing or killing its browser opens its own with profiles.open()."""
    context = profiles.fresh()
    if request.node.get_closest_marker("no_python"):
        context.route(PYTHON_FILES, lambda route: None)
    page = context.pages[0] if context.pages else context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # The page's and the worker's warnings, printed: pytest shows them when the test fails.
    page.on("console", lambda message: message.type in ("warning", "error")
            and print(f"console {message.type}: {message.text}"))
    yield page
    assert errors == [], f"JavaScript errors on the page: {errors}"


def screenshot(page, name: str, full_page: bool = False) -> Path:
    """Keep a screenshot of `page` as test-artifacts/<name>.png (the whole page if asked)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    from playwright.sync_api import Error as PlaywrightError
    try:
        page.screenshot(path=str(path), full_page=full_page)
    except PlaywrightError as error:
        # A screenshot is kept for a person to look at, not asserted: on a machine too busy to
        # paint within the time, or short of memory for a whole long page ("Unable to capture
        # screenshot"), the test's own checks still decide, and the picture is skipped.
        print(f"screenshot {name}: none kept ({str(error).splitlines()[0]})")
    return path
