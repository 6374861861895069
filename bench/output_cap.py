#!/usr/bin/env python3
"""A cell's output, capped where it is printed: memory under CPython. Prints figures; asserts nothing.

    python bench/output_cap.py

Each case runs in a fresh process through harness_py/cellrun.py (what the build runs, and the
page's worker runs in Pyodide) and reports the process's peak resident memory (ru_maxrss):
  - a cell printing one line (the floor);
  - a cell printing 100 MB (a million lines of 100 characters), with the cap;
  - the same cell with the cap lifted (OUTPUT_CAP set past 100 MB), which is how every cell ran
    before the cap moved into cellrun.
tests/test_cellrun.py asserts the bound (the 100 MB cell within 16 MB of the floor);
tests/browser/test_cells.py asserts it in Chromium on Python's heap (wasm memory).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN = """
import json, resource, sys, time
sys.path.insert(0, {harness_py!r})
import cellrun
if {uncapped!r}:
    cellrun.OUTPUT_CAP = 10 ** 12
started = time.perf_counter()
result = cellrun.run_cell({source!r}, harness_path={harness!r}, lab_dir={lab_dir!r})
print(json.dumps({{"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": time.perf_counter() - started,
                  "kept": len(result.output), "dropped": result.dropped}}))
"""
QUIET = "print('one line')\n"
FLOOD = "line = 'x' * 99\nfor _ in range(1_000_000):\n    print(line)\n"


def measure(folder: Path, source: str, uncapped: bool = False) -> dict:
    script = RUN.format(harness_py=str(ROOT / "harness_py"), uncapped=uncapped, source=source,
                        harness=str(folder / "harness.py"), lab_dir=str(folder))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-cap-") as name:
        folder = Path(name)
        (folder / "harness.py").write_text("")
        floor = measure(folder, QUIET)
        rows = [("one line", floor), ("100 MB, capped", measure(folder, FLOOD)),
                ("100 MB, cap lifted (before)", measure(folder, FLOOD, uncapped=True))]
    for label, figures in rows:
        print(f"{label:<30} peak {figures['peak_mb']:7.1f} MB  (+{figures['peak_mb'] - floor['peak_mb']:6.1f} MB)"
              f"  {figures['seconds']:5.2f} s  kept {figures['kept']:>11,} chars, "
              f"dropped {figures['dropped']:>11,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
