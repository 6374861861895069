"""The process a lesson's cells run in at build time (started by builder.cells, never imported).

It reads one JSON request on stdin: {"cellrun", "harness", "lab_dir", "name", "cells": [{"id",
"source"}]} (name: the cells' file name in tracebacks, builder/names.py CELL_NAME)
and runs the cells one after another through harness_py/cellrun.py, writing one JSON line per cell
to its original stdout. The cells' own prints go to cellrun's buffer; anything that escapes it
(os.write(1, ...)) lands on stderr, so it can never corrupt the protocol."""
import importlib.util
import json
import os
import sys


def main() -> int:
    request = json.load(sys.stdin)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    spec = importlib.util.spec_from_file_location("cellrun", request["cellrun"])
    cellrun = importlib.util.module_from_spec(spec)
    sys.modules["cellrun"] = cellrun
    spec.loader.exec_module(cellrun)
    for cell in request["cells"]:
        result = cellrun.run_cell(cell["source"], harness_path=request["harness"],
                                  lab_dir=request["lab_dir"], name=request["name"])
        protocol.write(json.dumps({"id": cell["id"], "output": result.output,
                                   "error": result.error}) + "\n")
        protocol.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
