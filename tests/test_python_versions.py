"""The Python a reader runs on their own machine works on CPython 3.10 and later.

That is the lab package, the course's harness and its tests (what a lab's folder holds), the
cell runner, and the offline book's serve.py. Only 3.11 is installed here, so this is checked
statically, with vermin: it knows which version added each module, function, keyword and piece
of syntax, and reports every use newer than 3.10."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READER_RUNS = [ROOT / "harness_py", ROOT / "site" / "serve.py"]
OLDEST = "3.10"


def vermin(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())", "--no-tips", "--violations", "--eval-annotations",
         "--no-parse-comments", f"-t={OLDEST}-", *map(str, paths)],
        capture_output=True, text=True)


def test_what_the_reader_runs_needs_nothing_newer_than_python_3_10():
    result = vermin(*READER_RUNS)
    assert result.returncode == 0, f"needs a Python newer than {OLDEST}:\n{result.stdout}{result.stderr}"


def test_the_check_itself_catches_a_3_11_feature(tmp_path):
    newer = tmp_path / "newer.py"
    newer.write_text("import tomllib\n")
    result = vermin(newer)
    assert result.returncode != 0 and "tomllib" in result.stdout
