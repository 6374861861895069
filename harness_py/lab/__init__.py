"""The stage props: `import lab`.

Every lesson's Python runs against a small simulated world instead of a real model and a real
disk, so that it runs the same in the page (Pyodide) as on your machine, with no key, no network,
and no randomness. This package is that world. It is not part of the harness you build: it is
the stage the harness performs on, and the tests look at the stage to see what the harness did.

    messages     user, text, call, reply, say, tool_result, provider_error; show, shape, validate
    workspace    Workspace (an in-memory disk with fsync, reboots and torn writes), cut, PowerCut
    model        ScriptedModel and its steps: forever, power_cut, raises, forgetful
    shell        Shell, a small deterministic bash over a Workspace
    crashes      explore_crashes: pull the plug at every point and check the recovery

Standard library only; CPython 3.10+ and Pyodide. Nothing here keeps state between calls at
module level: importing it twice, or in a fresh process, gives the same world.
"""

from __future__ import annotations

from typing import Iterable

from .crashes import CrashPoint, CrashReport, explore_crashes
from .messages import (CLIP, call, provider_error, reply, say, shape, show, text, tool_result,
                       user, validate)
from .model import (Request, ScriptedModel, ScriptExhausted, forever, forgetful, power_cut,
                    raises, tokens, usage)
from .shell import Shell
from .workspace import Cut, PowerCut, Workspace, cut

__all__ = [
    "user", "text", "call", "reply", "say", "tool_result", "provider_error",
    "show", "shape", "validate", "CLIP",
    "Workspace", "cut", "Cut", "PowerCut",
    "ScriptedModel", "Request", "ScriptExhausted", "forever", "power_cut", "raises", "forgetful",
    "tokens", "usage",
    "Shell", "drive",
    "explore_crashes", "CrashReport", "CrashPoint",
]


def drive(run: Iterable) -> list:
    """Consume a run to its end and return its events as a list: for a cell or a test that wants
    the run to happen and does not care to print anything on the way."""
    return list(run)
