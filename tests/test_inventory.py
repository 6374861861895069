"""The closing card's "Your harness now", worked out from the harness (builder/inventory.py)."""
from __future__ import annotations

from builder.inventory import Name, Region, inventory

BEFORE = '''import json

# == 1 messages ==
SYSTEM = "be brief"

def user_message(text):
    """A user message."""
    return {"role": "user", "content": text}

def _private():
    pass

# == 3 loop ==
def run_agent(model):
    """Old words."""
    return model.complete()

class Harness:
    def prompt(self, text):
        return text

    def _run(self):
        pass
'''

AFTER = '''import json

# == 1 messages ==
SYSTEM = "be brief"

def user_message(text):
    """A user message, said at more length: only the docstring changed."""
    return {"role": "user", "content": text}

# == 3 loop ==
async def run_agent(model):
    """Old words."""
    return await model.complete()

class Harness:
    def prompt(self, text):
        return text

    def steer(self, text):
        return text

# == 6 environment ==
class SessionLog:
    def replay(self):
        return []

def persist_to(log):
    return log
'''


def test_regions_in_order_with_functions_and_classes_and_no_constants_or_private_names():
    regions = inventory(AFTER, BEFORE)
    assert [(r.number, r.title) for r in regions] == [(1, "messages"), (3, "loop"), (6, "environment")]
    assert [n.name for n in regions[0].names] == ["user_message"]
    assert [n.name for n in regions[1].names] == ["run_agent", "Harness"]
    assert [m.name for m in regions[1].names[1].methods] == ["prompt", "steer"]


def test_new_and_changed_are_marked_and_a_docstring_is_not_a_change():
    messages, loop, environment = inventory(AFTER, BEFORE)
    assert messages.names[0] == Name("user_message", new=False, changed=False)
    assert loop.names[0] == Name("run_agent", new=False, changed=True), "async def is a change"
    harness = loop.names[1]
    assert (harness.new, harness.changed) == (False, False)
    assert harness.methods == (Name("prompt", False), Name("steer", True))
    assert all(n.new for n in environment.names) and environment.names[0].methods == (Name("replay", True),)


def test_the_first_page_has_everything_new_and_a_checkpoint_nothing():
    assert all(n.new for r in inventory(BEFORE) for n in r.names)
    same = inventory(AFTER, AFTER)
    assert not any(x.new or x.changed for r in same for n in r.names for x in (n, *n.methods))


def test_a_name_defined_twice_is_listed_once_where_it_is_defined_last():
    text = "# == 1 a ==\ndef f():\n    return 1\n\n# == 2 b ==\ndef f():\n    return 2\n"
    assert inventory(text) == [Region(2, "b", (Name("f", True),))]


def test_code_above_the_first_region_is_left_out():
    assert inventory("def helper():\n    pass\n") == []
