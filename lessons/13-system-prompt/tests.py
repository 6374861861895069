"""Lesson 13's lab tests: today's instructions.

Lab1 checks find_instructions, list_skills and build_system_prompt (point 13.1). Lab2 checks the
Session that builds the prompt when each prompt starts (point 13.2), and re-tests the rules it
rewrites: lesson 12's compaction and retry, lesson 05's brake and lesson 11's log. Each test's
docstring is its checklist line on the page, word for word. Run them with

    python lab/lab_check.py --harness harness.py --lesson 13 tests.py [--lab 1|2]
"""
import json
import types
import unittest

import harness
import lab

LESSON = 13
LOG = "session.jsonl"
ROOT = "Root rule: run the tests with `make test`.\n"
APP = "App rule: the app/ code uses 4 spaces.\n"
API = "API rule: every handler returns JSON.\n"
BESIDE = "Docs rule: write in British English.\n"
BELOW = "v2 rule: nothing here is released yet.\n"
RELEASE_BODY = "1. Bump the version in VERSION.\n2. Write CHANGELOG.md.\n3. SECRET-STEP-RELEASE tag it."
MIGRATE_BODY = "Run the migrations in order. SECRET-STEP-MIGRATE never edit an old one."


def _disk(without=()):
    """A project: instructions at the root, in app/ and in app/api/, one beside the way (docs/)
    and one below it (app/api/v2/), two skills, a folder that is not one and a SKILL.md one folder
    too deep (skills/archive/old-release/); less the paths in `without`."""
    files = {"AGENTS.md": ROOT, "app/AGENTS.md": APP, "app/api/AGENTS.md": API,
             "docs/AGENTS.md": BESIDE, "app/api/v2/AGENTS.md": BELOW,
             "app/api/handlers.py": "def get():\n    return {}\n",
             **lab.skill("release", "Cut a release: version, changelog, tag.", RELEASE_BODY),
             **lab.skill("db-migrate", "Write and run a database migration.", MIGRATE_BODY),
             **lab.skill("old-release", "The release steps of 2019.", "Retired.",
                         folder="skills/archive"),
             "skills/notes/README.md": "Not a skill: no SKILL.md here.\n"}
    return lab.Workspace({path: text for path, text in files.items() if path not in without})


class _UnsortedDisk(lab.Workspace):
    """A disk whose listdir gives names in reverse order: os.listdir promises no order."""

    def listdir(self, path="."):
        return list(reversed(super().listdir(path)))


class _VanishingDisk(lab.Workspace):
    """A disk on which skills/release/ is removed just after skills/ is listed, as if a teammate's
    cleanup ran at that moment."""

    def listdir(self, path="."):
        names = super().listdir(path)
        if path.strip("./") == "skills" and self.exists("skills/release/SKILL.md"):
            self.remove("skills/release/SKILL.md")
        return names


def _tool(name, description, guidelines=None):
    tool = {"name": name, "description": description,
            "parameters": {"type": "object", "properties": {}}, "execute": lambda arguments: ""}
    if guidelines is not None:
        tool["guidelines"] = guidelines
    return tool


def _tools(ws):
    return [harness.make_read_tool(ws), harness.make_write_tool(ws)]


def _plain(tool):
    """A deep copy of a tool dict without its execute function, to compare before and after."""
    return json.loads(json.dumps({k: v for k, v in tool.items() if k != "execute"}, default=repr))


def _first_difference(got, want):
    """Where two texts part, in words: a long assertEqual would make difflib think for ages."""
    for n, (a, b) in enumerate(zip(got.splitlines(), want.splitlines()), 1):
        if a != b:
            return f"line {n} is {a!r}; expected {b!r}"
    g, w = len(got.splitlines()), len(want.splitlines())
    if g != w:
        return f"it has {g} lines; expected {w}"
    return "they differ only in blank space at line ends or the end"


def _sections(prompt):
    return prompt.split("\n\n")


class _Counted:
    """A system prompt builder that counts how often it was asked."""

    def __init__(self, build):
        self.build, self.count = build, 0

    def __call__(self):
        self.count += 1
        return self.build()


def _reader(request):
    """A model that reads the file a user message names, then says it is done."""
    last = request.messages[-1]
    if last["role"] == "user":
        names = [w.strip(".,") for w in last["content"].split() if "." in w.strip(".,")]
        if names:
            return lab.reply(lab.call("read", {"path": names[0]}, id=f"r{len(request.messages)}"))
    return lab.say("Done.")


def _what(value):
    """A value for a sentence: its type, and its start."""
    return f"{type(value).__name__} {repr(value)[:60]}"


def _holding_prompt(value, skip=(), path="session", seen=None, depth=0):
    """Where in `value` a text holding harness.IDENTITY is kept, as a path such as
    "session.cache[0]", or None. Walks lists, tuples, sets, dicts (keys and values) and the
    attributes of objects, each object once, never into a module or the objects in `skip`."""
    seen = set(map(id, skip)) if seen is None else seen
    if isinstance(value, str):
        return path if harness.IDENTITY in value else None
    if (id(value) in seen or depth > 50 or isinstance(value, types.ModuleType)
            or isinstance(value, (int, float, bytes, type(None)))):
        return None
    seen.add(id(value))
    if isinstance(value, dict):
        items = [(f"{path}[{repr(key)[:40]}]", item) for key, item in value.items()]
        items += [(f"{path} (a key)", key) for key in value]
    elif isinstance(value, (list, tuple)):
        items = [(f"{path}[{n}]", item) for n, item in enumerate(value)]
    elif isinstance(value, (set, frozenset)):
        items = [(f"{path} (an element)", item) for item in value]
    else:
        attributes = getattr(value, "__dict__", None)
        if not isinstance(attributes, dict):
            return None
        items = [(f"{path}.{name}", item) for name, item in attributes.items()]
    for inner, item in items:
        found = _holding_prompt(item, skip, inner, seen, depth + 1)
        if found:
            return found
    return None


class _LabCase(lab.LabCase):
    def build(self, tools, ws, cwd=".", clock=None, **options):
        clock = clock or lab.Clock("2026-03-02")
        prompt = self.call("build_system_prompt", harness.build_system_prompt, tools, ws, cwd,
                           clock, **options)
        self.assertIsInstance(prompt, str, f"build_system_prompt returned "
                              f"{type(prompt).__name__}; expected the prompt, a str.")
        return prompt

    def find(self, ws, cwd):
        """find_instructions(ws, cwd), checked to be a list of (path, text) pairs first."""
        got = self.call("find_instructions", harness.find_instructions, ws, cwd)
        if not isinstance(got, (list, tuple)) or not all(
                isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in got):
            self.fail(f"find_instructions(ws, {cwd!r}) returned {_what(got)}; expected a list "
                      "of (path, text) pairs." + (" Did it forget to return?" if got is None
                                                  else ""))
        return [tuple(pair) for pair in got]

    def skills_of(self, got):
        """list_skills's answer, checked to be a list of dicts first."""
        if not isinstance(got, (list, tuple)) or not all(isinstance(s, dict) for s in got):
            self.fail(f"list_skills returned {_what(got)}; expected a list of dicts with the keys "
                      "name, description and path." + (" Did it forget to return?"
                                                       if got is None else ""))
        return got

    def session(self, model, system, tools, log, **settings):
        settings.setdefault("window", 100_000)
        return self.call("Session", harness.Session, model, system, tools, log, **settings)

    def systems(self, model):
        """The system prompt of every request the model was sent, each a str, or a failure."""
        for n, request in enumerate(model.calls, 1):
            if not isinstance(request.system, str):
                self.fail(f"request {n} was sent a {type(request.system).__name__} as its system "
                          "prompt; expected text. Call the builder and send what it returns.")
        return [request.system for request in model.calls]

    def prompt(self, session, text):
        events, error = lab.drain(session.prompt(text))
        if isinstance(error, lab.TooManyCalls):
            self.fail(f"prompt({text!r}) kept calling the model: {error}.")
        if error is not None:
            hint = (" A function went where text was expected: call the builder and use the text "
                    "it returns." if "not JSON serializable" in str(error) else "")
            self.fail(f"prompt({text!r}) raised {type(error).__name__}: {error}.{hint}")
        return events


# ----------------------------------------------------------------- lab 1: building the prompt

class Lab1(_LabCase):

    def test_instructions_root_to_cwd(self):
        """find_instructions(ws, "app/api") returns the AGENTS.md of the root, of app/ and of
        app/api/ as (path, text) pairs, the root's first and the working folder's last (by depth,
        not by spelling: from 2024/q1 the root's still comes first), each text as read (an empty
        file too), and leaves out a folder on the way that has none."""
        got = self.find(_disk(), "app/api")
        want = [("AGENTS.md", ROOT), ("app/AGENTS.md", APP), ("app/api/AGENTS.md", API)]
        self.assertEqual([tuple(pair) for pair in got], want,
                         f"find_instructions(ws, 'app/api') returned the paths "
                         f"{[pair[0] for pair in got]}; expected {[p for p, _ in want]}, each with "
                         "its text: the root's first, the working folder's last.")
        got = self.find(_disk(without=["app/AGENTS.md"]), "app/api")
        self.assertEqual([pair[0] for pair in got], ["AGENTS.md", "app/api/AGENTS.md"],
                         f"with no app/AGENTS.md, find_instructions returned "
                         f"{[pair[0] for pair in got]}; expected the two that exist, in order.")
        dated = lab.Workspace({"AGENTS.md": ROOT, "2024/AGENTS.md": "Frozen: change nothing.\n",
                               "2024/q1/AGENTS.md": "Q1 rule: amounts in euros.\n"})
        got = [pair[0] for pair in self.find(dated, "2024/q1")]
        want = ["AGENTS.md", "2024/AGENTS.md", "2024/q1/AGENTS.md"]
        self.assertEqual(got, want, f"find_instructions(ws, '2024/q1') returned {got}; expected "
                         f"{want}: root first, by depth. Sorting the paths puts '2024/' before "
                         "'AGENTS.md', because digits sort before letters.")
        ws = _disk()
        ws.write_text("app/AGENTS.md", "")
        got = [tuple(pair) for pair in self.find(ws, "app")]
        self.assertEqual(got, [("AGENTS.md", ROOT), ("app/AGENTS.md", "")], f"with an empty "
                         f"app/AGENTS.md, find_instructions(ws, 'app') returned {got}; expected "
                         "both files as read, the empty one too: it reports the disk, and the "
                         "prompt decides what to leave out.")

    def test_instructions_not_beside_or_below(self):
        """find_instructions never returns a file beside the way (docs/, or ap/ and app/a/, whose
        names merely begin the working folder's path) or below the working folder (app/api/v2/);
        from "." it returns only the root's; from a working folder that holds no file yet
        (app/new/), the files of the folders above it; on a disk with none, []."""
        got = [pair[0] for pair in self.find(_disk(), "app/api")]
        for path in ("docs/AGENTS.md", "app/api/v2/AGENTS.md"):
            self.assertNotIn(path, got, f"find_instructions(ws, 'app/api') returned {path}: only "
                             "the folders from the root down to the working folder count.")
        near = lab.Workspace({"AGENTS.md": ROOT, "ap/AGENTS.md": "Not on the way.\n",
                              "app/a/AGENTS.md": "Not on the way either.\n",
                              "app/api/handlers.py": ""})
        got = [pair[0] for pair in self.find(near, "app/api")]
        self.assertEqual(got, ["AGENTS.md"], f"find_instructions(ws, 'app/api') returned {got}; "
                         "expected ['AGENTS.md']. ap/ and app/a/ begin the text 'app/api' but are "
                         "not folders on the way: compare whole folder names, not the start of a "
                         "string.")
        got = [pair[0] for pair in self.find(_disk(), ".")]
        self.assertEqual(got, ["AGENTS.md"], f"find_instructions(ws, '.') returned {got}; "
                         "expected ['AGENTS.md']: the working folder is the root.")
        try:
            got = [pair[0] for pair in harness.find_instructions(_disk(), "app/new")]
        except OSError as error:
            self.fail(f"find_instructions(ws, 'app/new'), a working folder with no file in it yet, "
                      f"raised {type(error).__name__}: {error}. Look for each AGENTS.md by its "
                      "path; a folder that holds nothing cannot be listed.")
        self.assertEqual(got, ["AGENTS.md", "app/AGENTS.md"], f"from app/new/, a folder with no "
                         f"file yet, find_instructions returned {got}; expected the root's and "
                         "app/'s.")
        got = self.find(lab.Workspace({"a.py": ""}), "app")
        self.assertEqual(list(got), [], f"on a disk with no AGENTS.md, find_instructions "
                         f"returned {got!r}; expected [].")

    def test_instructions_read_now(self):
        """find_instructions reads the disk each time it is called: an AGENTS.md edited or
        removed since the last call is returned as it is now."""
        ws = _disk()
        self.find(ws, "app")
        ws.write_text("app/AGENTS.md", "App rule, edited: tabs now.\n")
        ws.remove("AGENTS.md")
        got = [tuple(p) for p in self.find(ws,
                                           "app")]
        self.assertEqual(got, [("app/AGENTS.md", "App rule, edited: tabs now.\n")],
                         f"after an edit and a removal, find_instructions returned {got}; "
                         "expected the edited file alone. Read the disk on every call; keep "
                         "nothing from the last one.")

    def test_list_skills(self):
        """list_skills(ws) gives one {"name", "description", "path"} per skills/<name>/SKILL.md,
        named by its folder even when its front matter says another name, sorted by name even
        when the disk lists the folder in another order, the description "" when its front
        matter has none, skips a folder without a SKILL.md and a SKILL.md deeper
        down (skills/archive/old-release/SKILL.md), and gives [] when there is no skills
        folder."""
        got = self.skills_of(self.call("on a disk with skills/notes/ (no SKILL.md) and "
                                       "skills/archive/old-release/SKILL.md, list_skills",
                                       harness.list_skills, _disk()))
        deep = [s for s in got if isinstance(s, dict) and "archive" in str(s.get("path"))]
        self.assertEqual(deep, [], f"list_skills listed {deep}: a skill is a SKILL.md directly "
                         "inside a folder of skills/, and skills/archive/old-release/ is one "
                         "folder deeper.")
        want = [{"name": "db-migrate", "description": "Write and run a database migration.",
                 "path": "skills/db-migrate/SKILL.md"},
                {"name": "release", "description": "Cut a release: version, changelog, tag.",
                 "path": "skills/release/SKILL.md"}]
        self.assertEqual([dict(s) for s in got], want, f"list_skills returned {got}; expected "
                         f"{want}.")
        unsorted = _UnsortedDisk(_disk().files)
        got = self.skills_of(self.call("on a disk whose listdir is not sorted, list_skills",
                                       harness.list_skills, unsorted))
        names = [s.get("name") for s in got]
        self.assertEqual(names, ["db-migrate", "release"], f"on a disk whose listdir gives "
                         f"['release', 'db-migrate'], list_skills named {names}; expected "
                         "['db-migrate', 'release']. A real disk lists a folder in no promised "
                         "order: sort the skills by name yourself.")
        bare = lab.Workspace({"skills/todo/SKILL.md": "Just a body, no front matter.\n"})
        got = self.skills_of(self.call("list_skills", harness.list_skills, bare))
        want = [{"name": "todo", "description": "", "path": "skills/todo/SKILL.md"}]
        self.assertEqual([dict(s) for s in got], want, f"for a SKILL.md with no front matter "
                         f"list_skills returned {got}; expected {want}: skill_description gives "
                         "\"\" and the skill is still listed.")
        renamed = lab.Workspace({"skills/deploy/SKILL.md":
                                 "---\nname: ship-it\ndescription: Deploy the app.\n---\n\nSteps.\n"})
        got = self.skills_of(self.call("list_skills", harness.list_skills, renamed))
        want = [{"name": "deploy", "description": "Deploy the app.",
                 "path": "skills/deploy/SKILL.md"}]
        self.assertEqual([dict(s) for s in got], want, f"for skills/deploy/SKILL.md whose front "
                         f"matter says name: ship-it, list_skills returned {got}; expected {want}: "
                         "a skill's name is its folder's, the name its path is built from.")
        got = self.skills_of(self.call("with no skills folder, list_skills", harness.list_skills,
                                       lab.Workspace({"a.py": ""})))
        self.assertEqual(list(got), [], f"with no skills folder, list_skills returned {got!r}; "
                         "expected [].")

    def test_skills_folder_exactly(self):
        """list_skills reads the folder named skills/ and no other (skills-old/legacy/SKILL.md is
        not a skill), and leaves out a skill removed just after skills/ was listed, without an
        error."""
        ws = lab.Workspace({**lab.skill("lint", "Run the linter.", "ruff ."),
                            **lab.skill("legacy", "Old steps.", "...", folder="skills-old")})
        got = self.skills_of(self.call("list_skills", harness.list_skills, ws))
        names = [s.get("name") for s in got]
        self.assertEqual(names, ["lint"], f"with skills/lint/ and skills-old/legacy/ on the disk, "
                         f"list_skills named {names}; expected ['lint']: skills-old/ only begins "
                         "with the text 'skills', it is not the skills folder.")
        ws = _VanishingDisk({**lab.skill("lint", "Run the linter.", "ruff ."),
                             **lab.skill("release", "Cut a release.", "...")})
        try:
            got = self.skills_of(harness.list_skills(ws))
        except OSError as error:
            self.fail(f"with skills/release/ removed just after skills/ was listed, list_skills "
                      f"raised {type(error).__name__}: {error}. A disk can change under you: "
                      "look for each SKILL.md by its path, and leave out one that is not there.")
        names = [s.get("name") for s in got]
        self.assertEqual(names, ["lint"], f"with skills/release/ removed just after skills/ was "
                         f"listed, list_skills named {names}; expected ['lint'], the skill still "
                         "on the disk.")

    def test_sections_in_order(self):
        """The prompt's sections come in the spec's order, one blank line between them: the
        identity, the tools, the guidelines, the project's instructions, the skills, then the
        date with the working folder."""
        ws = _disk()
        prompt = self.build(_tools(ws), ws, "app")
        parts = _sections(prompt)
        heads = [IDENTITY_HEAD, "Tools:", "Guidelines:", INSTRUCTIONS_HEAD, SKILLS_HEAD,
                 "Today's date:"]
        where = []
        for head in heads:
            found = [n for n, part in enumerate(parts) if part.startswith(head)]
            self.assertTrue(found, f"no section of the prompt starts with {head!r}. Sections are "
                            "joined by one blank line, each starting with its heading line.")
            where.append(found[0])
        self.assertEqual(where, sorted(where), "the sections come in the order "
                         f"{[heads[n] for n in sorted(range(6), key=lambda n: where[n])]}; "
                         f"expected {heads}.")
        self.assertEqual(parts[0], harness.IDENTITY, f"the prompt starts {parts[0][:60]!r}; "
                         "expected IDENTITY, alone in its section.")

    def test_tools_one_line_each(self):
        """Each tool is one line, f"- {name}: {snippet(tool)}", in the order given, and nothing
        more of its description; with no tools the section reads "- (none)"."""
        ws = _disk()
        tools = [harness.make_read_tool(ws), harness.make_write_tool(ws)]
        part = next((p for p in _sections(self.build(tools, ws)) if p.startswith("Tools:")), "")
        want = "Tools:\n- read: Read a text file and return its contents.\n- write: Write a text file."
        self.assertEqual(part, want, f"the tools section is {part!r}; expected {want!r}.")
        part = next((p for p in _sections(self.build(tools[::-1], ws)) if p.startswith("Tools:")),
                    "")
        want = "Tools:\n- write: Write a text file.\n- read: Read a text file and return its contents."
        self.assertEqual(part, want, f"given [write, read], the tools section is {part!r}; expected "
                         f"{want!r}: the order the caller gave, the order of the request's tool "
                         "list, not sorted.")
        part = next((p for p in _sections(self.build([], ws)) if p.startswith("Tools:")), "")
        self.assertEqual(part, "Tools:\n- (none)", f"with no tools the section is {part!r}; "
                         "expected 'Tools:\\n- (none)'.")

    def test_guidelines_once(self):
        """Guidelines come from each tool's "guidelines", then the caller's, then GUIDELINES,
        each said once, where it first came."""
        ws = _disk()
        tools = [_tool("grep", "Search files.", ["Quote paths."]),
                 _tool("find", "Find files.", ["Quote paths.", "Prefer grep to reading."])]
        extra = ["Quote paths.", "Keep answers short.", harness.GUIDELINES[0]]
        part = next((p for p in _sections(self.build(tools, ws, guidelines=extra))
                     if p.startswith("Guidelines:")), "")
        want = ["Quote paths.", "Prefer grep to reading.", "Keep answers short."]
        want += list(harness.GUIDELINES)
        got = [line[2:] for line in part.splitlines()[1:]]
        self.assertEqual(got, want, f"the guidelines are {got}; expected {want}: each once, "
                         "where it first came.")

    def test_instructions_in_prompt(self):
        """The project's instructions follow their heading line, each file as
        <instructions path="..."> with its text rstripped and </instructions>, in
        find_instructions' order,
        nearest last (2024/ after the root, though it sorts first); with none found there is no
        such section."""
        ws = _disk()
        part = next((p for p in _sections(self.build(_tools(ws), ws, "app"))
                     if p.startswith(INSTRUCTIONS_HEAD)), None)
        want = "\n".join([INSTRUCTIONS_HEAD, '<instructions path="AGENTS.md">', ROOT.rstrip(),
                          "</instructions>", '<instructions path="app/AGENTS.md">', APP.rstrip(),
                          "</instructions>"])
        self.assertIsNotNone(part, "no section starts with the instructions' heading line.")
        self.assertEqual(part, want, f"the instructions section: {_first_difference(part, want)}.")
        dated = lab.Workspace({"AGENTS.md": "Root.\n", "2024/AGENTS.md": "Year.\n"})
        prompt = self.build(_tools(dated), dated, "2024")
        tags = [line for line in prompt.splitlines() if line.startswith("<instructions")]
        want = ['<instructions path="AGENTS.md">', '<instructions path="2024/AGENTS.md">']
        self.assertEqual(tags, want, f"for a session in 2024/ the prompt's files come in the order "
                         f"{tags}; expected {want}: in find_instructions' order, root first, "
                         "never sorted by path.")
        bare = lab.Workspace({"a.py": ""})
        prompt = self.build(_tools(bare), bare, ".")
        self.assertNotIn("<instructions", prompt, "with no AGENTS.md the prompt still has an "
                         "instructions section; leave out a section with nothing in it.")

    def test_blank_instruction_file_left_out(self):
        """An AGENTS.md that is empty, or holds nothing but spaces and line breaks, is left out of
        the prompt, the other files kept; with no other file there is no instructions
        section."""
        for blank in ("", "  \n\n"):
            ws = lab.Workspace({"AGENTS.md": "Use tabs.\n", "app/AGENTS.md": blank})
            prompt = self.build(_tools(ws), ws, "app")
            self.assertNotIn("app/AGENTS.md", prompt, f"an app/AGENTS.md holding {blank!r} is in "
                             "the prompt: a file with nothing but blank space in it says nothing, "
                             "so leave it out.")
            self.assertIn('<instructions path="AGENTS.md">\nUse tabs.\n</instructions>', prompt,
                          "beside a blank app/AGENTS.md, the root's file is missing from the "
                          "prompt: leave out the blank file only.")
            ws = lab.Workspace({"AGENTS.md": blank})
            prompt = self.build(_tools(ws), ws)
            self.assertNotIn(INSTRUCTIONS_HEAD, prompt, f"with one AGENTS.md holding {blank!r}, "
                             "the prompt has the instructions heading over nothing: with every "
                             "file left out, leave out the section.")

    def test_skills_listed_not_pasted(self):
        """Each skill is listed as f"- {name}: {description} ({path})" under the skills heading,
        and no line of a skill's body is in the prompt."""
        ws = _disk()
        prompt = self.build(_tools(ws), ws)
        part = next((p for p in _sections(prompt) if p.startswith(SKILLS_HEAD)), None)
        want = "\n".join([SKILLS_HEAD,
                          "- db-migrate: Write and run a database migration. "
                          "(skills/db-migrate/SKILL.md)",
                          "- release: Cut a release: version, changelog, tag. "
                          "(skills/release/SKILL.md)"])
        self.assertIsNotNone(part, "no section starts with the skills' heading line.")
        self.assertEqual(part, want, f"the skills section: {_first_difference(part, want)}.")
        for secret in ("SECRET-STEP-RELEASE", "SECRET-STEP-MIGRATE", "Bump the version"):
            self.assertNotIn(secret, prompt, f"the prompt holds {secret!r}, from a skill's body. "
                             "List a skill by name and description; the model reads the body "
                             "with the read tool when it needs it.")

    def test_skills_need_read(self):
        """With no tool named "read" the skills are not listed (the heading sends the model to a
        read tool): not with only write, not with only bash, not with a tool whose name only
        contains "read" (read_many, thread); and with no skills there is no skills section."""
        ws = _disk()
        prompt = self.build([harness.make_write_tool(ws)], ws)
        self.assertNotIn(SKILLS_HEAD, prompt, "the skills are listed with no read tool on offer: "
                         "the model could see a skill and never open it.")
        bash = {"name": "bash", "description": "Run a shell command in the workspace.",
                "parameters": {"type": "object", "properties": {}}, "execute": lambda a: ""}
        prompt = self.build([bash], ws)
        self.assertNotIn(SKILLS_HEAD, prompt, "the skills are listed with only a tool named "
                         "'bash' on offer. bash could cat the file, but the heading tells the "
                         "model to open it with the read tool, which is not there: list the "
                         "skills only when a tool is named exactly 'read'.")
        for name in ("read_many", "thread"):
            other = dict(harness.make_write_tool(ws), name=name)
            prompt = self.build([other], ws)
            self.assertNotIn(SKILLS_HEAD, prompt, f"the skills are listed with only a tool named "
                             f"{name!r} on offer: the prompt tells the model to open them with "
                             "the read tool, so the tool's name must be exactly 'read'.")
        bare = lab.Workspace({"a.py": ""})
        prompt = self.build(_tools(bare), bare)
        self.assertNotIn(SKILLS_HEAD, prompt, "with no skills on the disk there is still a "
                         "skills section; leave it out.")

    def test_date_from_clock(self):
        """The date is asked of the clock it is given, at each build: Clock("2031-07-04") gives
        "Today's date: 2031-07-04", the next day after clock.advance(), and another clock its own
        date."""
        ws = _disk()
        clock = lab.Clock("2031-07-04")
        for want in ("2031-07-04", "2031-07-05"):
            prompt = self.build(_tools(ws), ws, ".", clock)
            self.assertIn(f"Today's date: {want}", prompt, "the prompt says "
                          f"{_date_line(prompt)!r}; expected 'Today's date: {want}', asked of "
                          "the clock passed in, now. Not the machine's date, not one kept from "
                          "an earlier build.")
            clock.advance()
        prompt = self.build(_tools(ws), ws, ".", lab.Clock("2029-01-31"))
        self.assertIn("Today's date: 2029-01-31", prompt, f"with another clock the prompt says "
                      f"{_date_line(prompt)!r}; expected 'Today's date: 2029-01-31'.")

    def test_last_section(self):
        """The last section is f"Today's date: {date}" and, on the next line, the working folder:
        "Working folder: /workspace" for "." and "/workspace/app/api" for "app/api"."""
        ws = _disk()
        for cwd, where in ((".", "/workspace"), ("app/api", "/workspace/app/api")):
            last = _sections(self.build(_tools(ws), ws, cwd))[-1]
            want = f"Today's date: 2026-03-02\nWorking folder: {where}"
            self.assertEqual(last, want, f"with cwd {cwd!r} the last section is {last!r}; "
                             f"expected {want!r}: /workspace, then the folders find_instructions "
                             "walks.")

    def test_custom_replaces_default_only(self):
        """custom= takes the place of the default part (identity, tools, guidelines) and nothing
        else: the project's instructions, the skills, the date and the folder still follow it."""
        ws = _disk()
        prompt = self.build(_tools(ws), ws, "app", custom="You are Ada, a careful reviewer.")
        parts = _sections(prompt)
        self.assertEqual(parts[0], "You are Ada, a careful reviewer.", f"with custom= the prompt "
                         f"starts {parts[0][:60]!r}; expected the custom text.")
        for gone in (harness.IDENTITY, "Tools:", "Guidelines:"):
            self.assertNotIn(gone, prompt, f"with custom= the prompt still holds {gone[:30]!r}: "
                             "the custom text replaces the default part.")
        for kept in (INSTRUCTIONS_HEAD, ROOT.strip(), APP.strip(), SKILLS_HEAD,
                     "Today's date: 2026-03-02", "Working folder: /workspace/app"):
            self.assertIn(kept, prompt, f"with custom= the prompt lost {kept!r}: a custom prompt "
                          "replaces who the agent is, not the project's rules or today's facts.")

    def test_empty_sections_left_out(self):
        """With no AGENTS.md on the way there is no instructions heading; with custom="" there is
        no first section at all, and the prompt starts with the next one."""
        ws = lab.Workspace({"main.py": "print('hi')\n"})
        prompt = self.build(_tools(ws), ws, ".")
        self.assertNotIn(INSTRUCTIONS_HEAD, prompt, "with no AGENTS.md anywhere the prompt still "
                         "has the instructions heading: leave out a section with nothing in it.")
        prompt = self.build(_tools(ws), ws, ".", custom="")
        self.assertTrue(prompt.startswith("Today's date:"),
                        f"with custom=\"\" and nothing else to say, the prompt starts "
                        f"{prompt[:40]!r}; expected the date line: an empty custom leaves no "
                        "section, and no blank line before the next one.")

    def test_whole_prompt(self):
        """For a small project the whole prompt is exactly the spec's text, character for
        character."""
        ws = lab.Workspace({"AGENTS.md": "Use tabs.\n",
                            **lab.skill("lint", "Run the linter and fix what it says.", "ruff .")})
        tools = [_tool("read", "Read a file. Then more.", ["Read before you write."])]
        prompt = self.build(tools, ws, "src", lab.Clock("2026-12-24"))
        want = "\n\n".join([
            harness.IDENTITY,
            "Tools:\n- read: Read a file.",
            "Guidelines:\n" + "\n".join(f"- {g}" for g in
                                        ["Read before you write.", *harness.GUIDELINES]),
            f'{INSTRUCTIONS_HEAD}\n<instructions path="AGENTS.md">\nUse tabs.\n</instructions>',
            f"{SKILLS_HEAD}\n- lint: Run the linter and fix what it says. (skills/lint/SKILL.md)",
            "Today's date: 2026-12-24\nWorking folder: /workspace/src"])
        if prompt != want:
            self.fail(f"the prompt differs from the spec's: {_first_difference(prompt, want)}.")

    def test_writes_nothing(self):
        """Building the prompt writes nothing to the disk and changes none of its arguments (the
        tools, their guidelines, the caller's list of guidelines), and the same disk, tools,
        guidelines, folder and date give the same text twice."""
        ws = _disk()
        tools = [_tool("grep", "Search files.", ["Quote paths."]),
                 _tool("find", "Find files.", ["Prefer grep to reading."])] + _tools(ws)
        extra = ["Keep answers short."]
        before = [_plain(tool) for tool in tools]
        first = self.build(tools, ws, "app/api", guidelines=extra)
        second = self.build(tools, ws, "app/api", guidelines=extra)
        self.assertEqual(ws.writes, [], f"building the prompt wrote to the disk: {ws.writes[:2]}.")
        changed = [what for what, now, was in (
            ("the grep tool's guidelines", tools[0]["guidelines"], ["Quote paths."]),
            ("the find tool's guidelines", tools[1]["guidelines"], ["Prefer grep to reading."]),
            ("the caller's guidelines", extra, ["Keep answers short."]),
            ("the list of tools", [t["name"] for t in tools], ["grep", "find", "read", "write"]))
            if now != was]
        changed += [f"the {was['name']} tool (its keys are now {sorted(_plain(now))})"
                    for now, was in zip(tools, before) if _plain(now) != was]
        self.assertEqual(changed, [], f"after two builds, {', '.join(changed)} had changed: "
                         "building the prompt must leave its arguments as they came. Gather the "
                         "guidelines into a new list of your own.")
        self.assertTrue(first == second, "two builds of the same world differ: "
                        f"{_first_difference(second, first)}.")

    def test_no_instructions_no_heading(self):
        """With no instruction file on the way to the working folder, the prompt has no instructions section: no heading with nothing under it."""
        ws = _disk(without=("AGENTS.md", "app/AGENTS.md", "app/api/AGENTS.md"))
        prompt = self.call("build_system_prompt", harness.build_system_prompt, _tools(ws), ws,
                           "app/api", lab.Clock("2026-03-02"))
        self.assertNotIn(INSTRUCTIONS_HEAD, prompt, "with no instruction file to read, the prompt "
                         f"still says {INSTRUCTIONS_HEAD!r}: add the section only when "
                         "find_instructions found a file.")


IDENTITY_HEAD = "You are"
INSTRUCTIONS_HEAD = "Project instructions, outermost first; the last is nearest and wins:"
SKILLS_HEAD = "Skills: when a task matches one, read its file with the read tool first."


def _date_line(prompt):
    return next((line for line in prompt.splitlines() if line.startswith("Today's date")),
                "(no date line)")


# --------------------------------------------------------------- lab 2: the Session builds it

def _world(clock=None):
    """A disk with instructions and a skill, its tools, a clock and a counted builder."""
    ws = _disk()
    tools = _tools(ws)
    clock = clock or lab.Clock("2026-03-02")
    build = _Counted(lambda: harness.build_system_prompt(tools, ws, "app", clock))
    return ws, tools, clock, build


class Lab2(_LabCase):

    def test_string_still_works(self):
        """A Session given a string sends that string as the system prompt of every request, as
        in lesson 12."""
        ws = _disk()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        session = self.session(model, "You are terse.", _tools(ws), harness.SessionLog(ws, LOG))
        self.prompt(session, "Read AGENTS.md.")
        systems = {request.system for request in model.calls}
        self.assertEqual(systems, {"You are terse."}, f"the requests carried {systems}; expected "
                         "the string given.")

    def test_builds_once_a_prompt(self):
        """Given a function, the Session calls it once at the start of each prompt, however many
        requests the prompt makes, and every request of that prompt carries the text it
        returned."""
        ws, tools, clock, build = _world()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG))
        self.prompt(session, "Read AGENTS.md.")
        systems = self.systems(model)
        self.assertEqual(build.count, 1, f"one prompt of {len(systems)} requests called the "
                         f"builder {build.count} times; expected once, at the prompt's start.")
        want = harness.build_system_prompt(tools, ws, "app", clock)
        for n, system in enumerate(systems, 1):
            self.assertTrue(isinstance(system, str) and system == want,
                            f"request {n} carried {str(system)[:60]!r}; expected the text the "
                            "builder returned, not the function itself.")
        self.prompt(session, "Read app/AGENTS.md.")
        self.assertEqual(build.count, 2, f"after two prompts the builder was called "
                         f"{build.count} times; expected twice, once a prompt.")

    def test_edit_between_prompts(self):
        """An AGENTS.md edited between two prompts of one Session is in every request of the
        second prompt, and was in none of the first."""
        ws, tools, clock, build = _world()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG))
        self.prompt(session, "Read AGENTS.md.")
        before = len(model.calls)
        ws.write_text("app/AGENTS.md", "App rule, edited: tabs, not spaces.\n")
        self.prompt(session, "Read app/AGENTS.md.")
        systems = self.systems(model)
        self.assertFalse(any("edited: tabs" in s for s in systems[:before]),
                         "a request of the first prompt held the edit made after it.")
        late = systems[before:]
        self.assertTrue(late and all("edited: tabs" in s for s in late),
                        "the second prompt's requests do not hold the edited AGENTS.md; "
                        "expected every one of them to: build the prompt when each prompt "
                        "starts, not once for the Session.")

    def test_edit_during_run_waits(self):
        """When a tool edits AGENTS.md during a prompt, the rest of that prompt's requests keep
        the prompt it started with, and the next prompt's carry the edit."""
        ws, tools, clock, build = _world()

        def editor(request):
            last = request.messages[-1]
            if last["role"] == "user":
                return lab.reply(lab.call("write", {"path": "AGENTS.md",
                                                    "content": "Root rule, edited mid-run.\n"},
                                          id=f"w{len(request.messages)}"))
            return lab.say("Edited.")
        model = lab.capped(lab.ScriptedModel([lab.forever(editor)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG))
        self.prompt(session, "Change the root rule.")
        first = self.systems(model)
        self.assertEqual(len(first), 2, f"the prompt made {len(first)} requests; expected 2.")
        self.assertEqual(first[0], first[1], "the prompt's second request carried a different "
                         "system prompt from its first: build it once, when the prompt starts, "
                         "so a run keeps one set of instructions from start to end.")
        self.prompt(session, "Carry on.")
        self.assertIn("edited mid-run", self.systems(model)[-1], "the next prompt does not carry "
                      "the AGENTS.md edited during the last one.")

    def test_resume_today(self):
        """Resumed the next day on the rebooted disk, with the write tool gone and AGENTS.md
        changed, a new Session sends yesterday's transcript with exactly today's prompt."""
        ws, tools, clock, build = _world()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG))
        self.prompt(session, "Read AGENTS.md.")
        yesterday = harness.SessionLog(ws, LOG).replay()
        disk = ws.reboot()
        disk.write_text("AGENTS.md", "Root rule, new today: run `make check`.\n")
        clock.advance()
        today_tools = [harness.make_read_tool(disk)]
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        log = harness.SessionLog(disk, LOG)
        session = self.session(model, lambda: harness.build_system_prompt(today_tools, disk,
                                                                          "app", clock),
                               today_tools, log)
        self.prompt(session, "Read app/AGENTS.md.")
        want = harness.build_system_prompt(today_tools, disk, "app", clock)
        sent = model.calls[0]
        self.systems(model)
        if sent.system != want:
            self.fail(f"the resumed session's first request carried a system prompt other than "
                      f"today's: {_first_difference(sent.system, want)}. Build it from today's "
                      "tools, files and date; never replay one from before.")
        self.assertEqual(sent.messages[:len(yesterday)], yesterday, "the resumed session did not "
                         "send yesterday's transcript first.")

    def test_log_holds_no_prompt(self):
        """After two prompts the log holds message entries only: no line of it holds the system
        prompt or any piece of it (the identity, an instruction file, the date)."""
        ws, tools, clock, build = _world()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG))
        self.prompt(session, "Read handlers.py.")
        self.prompt(session, "Read it again.")
        self.assertTrue(ws.exists(LOG), f"after two prompts there is no {LOG}: nothing was saved.")
        text = ws.read_text(LOG)
        kinds = {json.loads(line).get("type") for line in text.splitlines()}
        self.assertEqual(kinds, {"message"}, f"the log holds entries of the kinds {sorted(kinds)}; "
                         "expected messages only: the prompt is built, never stored.")
        for piece in (harness.IDENTITY[:40], "Today's date", "App rule"):
            self.assertNotIn(piece, text, f"the log holds {piece!r}, a piece of the system "
                             "prompt: a resumed session would read yesterday's.")

    def test_threshold_on_a_later_prompt(self):
        """A Session whose fifth prompt crosses the threshold compacts then, and that prompt's
        first request starts with the summary: each prompt's run is made from the messages as
        they stand after the compaction, with that prompt's system prompt."""
        def world():
            ws, tools, clock, build = _world()
            log = harness.SessionLog(ws, LOG)
            model = lab.capped(lab.ScriptedModel([lab.forever(lab.summariser(otherwise=_reader))]))
            return ws, tools, clock, build, log, model
        ws, tools, clock, build, log, model = world()
        probe = self.session(model, build, tools, log)
        for n in range(4):
            self.prompt(probe, f"Read handlers.py, time {n}.")
        text = "Read handlers.py again."
        system = harness.build_system_prompt(tools, ws, "app", clock)
        need = harness.estimate_tokens([harness.user_message(system)] + log.replay()
                                       + [harness.user_message(text)])
        ws, tools, clock, build, log, model = world()
        session = self.session(model, build, tools, log, window=need + 199, reserve=200,
                               keep_recent=60)                  # threshold: need - 1
        for n in range(4):
            early = [e for e in self.prompt(session, f"Read handlers.py, time {n}.")
                     if e["type"] == "compaction"]
            self.assertEqual(early, [], f"prompt {n + 1} compacted; its estimate was under the "
                             "threshold. Compact only when the estimate is over window - reserve.")
        start = len(model.calls)
        events = self.prompt(session, text)
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        self.assertEqual(reasons, ["threshold"], f"the fifth prompt's compaction events were "
                         f"{reasons}; expected one, reason 'threshold': its estimate, the system "
                         "prompt counted, was one token over window - reserve.")
        work = [r for r in model.calls[start:] if r.tools]
        first = work[0].messages[0] if work else None
        self.assertTrue(first and str(first.get("content", "")).startswith(harness.SUMMARY_PREFIX),
                        "the fifth prompt compacted, but its first request did not start with the "
                        "summary: the run was not made from the compacted messages. Make each "
                        "prompt's Harness when the prompt starts, from the messages as they stand, "
                        "not once for the Session.")

    def test_estimate_counts_system(self):
        """The estimate before a prompt counts the system prompt as one more message, whether the
        Session was given a builder or a string: at a window just under
        estimate_tokens([user_message(system)] + messages + [user_message(text)]) + reserve it
        compacts first, and still sends the one text it built and counted; at that window exactly
        it does not compact."""
        big = "".join(f"- Rule {n}: keep module {n} free of imports from app/.\n"
                      for n in range(150))
        cases = [(given, window_less, compacts) for given in ("a builder", "a string")
                 for window_less, compacts in ((0, False), (1, True))]
        for given, window_less, compacts in cases:
            ws, tools, clock, build = _world()
            ws.write_text("app/AGENTS.md", big)
            log = harness.SessionLog(ws, LOG)
            model = lab.capped(lab.ScriptedModel([lab.forever(lab.summariser(otherwise=_reader))]))
            session = self.session(model, build, tools, log)
            for n in range(4):
                self.prompt(session, f"Read handlers.py, time {n}.")
            text = "Read handlers.py again."
            system = harness.build_system_prompt(tools, ws, "app", clock)
            need = harness.estimate_tokens([harness.user_message(system)] + log.replay()
                                           + [harness.user_message(text)])
            session = self.session(model, build if given == "a builder" else system, tools, log,
                                   window=need + 200 - window_less, reserve=200, keep_recent=60)
            build.count, start = 0, len(model.calls)
            events = self.prompt(session, text)
            did = [e for e in events if e["type"] == "compaction"]
            if compacts:
                self.assertEqual([e.get("reason") for e in did], ["threshold"],
                                 f"given {given}, with the system prompt ({len(system)} "
                                 "characters) counted the request is one token over the "
                                 "threshold, and the Session did not compact first "
                                 f"({len(did)} compaction events). Count the system prompt in "
                                 "the estimate, whether it came as text or from a builder.")
                sent = {r.system for r in model.calls[start:] if r.tools}
                if given == "a builder":
                    self.assertEqual((build.count, sent), (1, {system}), f"a prompt that "
                                     f"compacted at the threshold called the builder "
                                     f"{build.count} times and sent {len(sent)} different "
                                     "system prompt(s); expected one build, and its text sent: "
                                     "the text the estimate counted is the text the run sends, "
                                     "compaction or not.")
            else:
                self.assertEqual(did, [], f"given {given}, the Session compacted with the request "
                                 "exactly at the threshold, the system prompt counted once as "
                                 "one more message; expected no compaction: over means over, and "
                                 "the prompt is counted once, in the estimate only.")

    def refused_once(self, text):
        """Four prompts of a session, then prompt(text) with a builder and a provider that refuses
        its first request for length: (events, model, build, log)."""
        ws, tools, clock, build = _world()
        log = harness.SessionLog(ws, LOG)
        session = self.session(lab.capped(lab.ScriptedModel([lab.forever(_reader)])), build, tools,
                               log)
        for n in range(4):
            self.prompt(session, f"Read handlers.py, time {n}.")
        refused = []

        def step(request):
            if request.tools and not refused:
                refused.append(request)
                return lab.provider_error("400 prompt is too long: 9120 tokens > 8000 maximum")
            return lab.summariser(otherwise=_reader)(request)
        model = lab.capped(lab.ScriptedModel([lab.forever(step)]))
        build.count = 0
        session = self.session(model, build, tools, log, keep_recent=60)
        return self.prompt(session, text), model, build, log

    def test_retry_same_prompt(self):
        """After a refusal for length the Session compacts once and retries with the same system
        prompt: the builder is still called once for that prompt."""
        events, model, build, log = self.refused_once("Read app/AGENTS.md.")
        self.assertEqual([e.get("reason") for e in events if e["type"] == "compaction"],
                         ["overflow"], "after the refusal the Session did not compact once.")
        self.systems(model)
        work = [r.system for r in model.calls if r.tools]
        self.assertEqual(build.count, 1, f"the prompt and its retry called the builder "
                         f"{build.count} times; expected once: the retry sends the same request "
                         "again, instructions included.")
        self.assertTrue(len(work) >= 2 and len(set(work)) == 1, "the retry carried a different "
                        "system prompt from the refused request.")

    def test_retry_adds_no_message(self):
        """The retry after a refusal for length carries on from the log with prompt(None): the
        prompt's user message is in the log once, and the log ends with the model's answer."""
        text = "Read app/AGENTS.md."
        events, model, build, log = self.refused_once(text)
        messages = log.replay()
        times = sum(m["role"] == "user" and m["content"] == text for m in messages)
        hint = ("The retry resends the request as the log has it: prompt(None), not "
                "prompt(text), which adds the user's message again." if times > 1 else
                "Save every message of the run to the log, the retry's too.")
        self.assertEqual(times, 1, f"after the retry the log holds {text!r} {times} times; "
                         f"expected once. {hint}")
        last = messages[-1] if messages else {}
        self.assertTrue(last.get("role") == "assistant" and last.get("stop_reason") != "error",
                        "after the retry the log does not end with the model's answer.")

    def test_retry_only_once_still(self):
        """Lesson 12's "once" holds with a builder: a provider that refuses every request for
        length gets one compaction and two refused requests, no third, and the log ends with the
        second refusal."""
        ws, tools, clock, build = _world()
        log = harness.SessionLog(ws, LOG)
        session = self.session(lab.capped(lab.ScriptedModel([lab.forever(_reader)])), build, tools,
                               log)
        for n in range(4):
            self.prompt(session, f"Read handlers.py, time {n}.")

        def step(request):
            if request.tools:
                return lab.provider_error("400 prompt is too long: 9120 tokens > 8000 maximum")
            return lab.summariser(otherwise=_reader)(request)
        model = lab.capped(lab.ScriptedModel([lab.forever(step)]))
        session = self.session(model, build, tools, log, keep_recent=60)
        events, error = lab.drain(session.prompt("Read app/AGENTS.md."))
        if isinstance(error, lab.TooManyCalls):
            self.fail("with every request refused for length the Session kept compacting and "
                      "retrying. Compact once, retry once: a second refusal stays in the record.")
        self.assertIsNone(error, f"the prompt raised {error!r}.")
        reasons = [e.get("reason") for e in events if e["type"] == "compaction"]
        work = [r for r in model.calls if r.tools]
        self.assertEqual((reasons, len(work)), (["overflow"], 2),
                         f"with every request refused for length the Session compacted "
                         f"{len(reasons)} time(s) and sent {len(work)} refused requests; expected "
                         "one compaction and two requests, the refused one and its one retry. "
                         "A second refusal stays in the record: compact once, retry once.")
        self.assertTrue(harness.is_overflow(log.replay()[-1]), "the log does not end with the "
                        "second refusal, for the caller to see.")

    def test_one_writer_still(self):
        """Lesson 12's one writer holds with a builder: while a prompt is running, is_running is
        True and a second prompt() on the Session raises RuntimeError("already running") without
        calling the builder; after the first ends, the next one runs."""
        ws, tools, clock, build = _world()
        session = self.session(lab.capped(lab.ScriptedModel([lab.forever(_reader)])), build, tools,
                               harness.SessionLog(ws, LOG))
        first = lab.steps(session.prompt("Read AGENTS.md."))
        next(first, None)
        running = getattr(session, "is_running", None)
        self.assertIs(running, True, f"mid-run, session.is_running is {running!r}; expected True, "
                      "as in lesson 12.")
        built = build.count
        try:
            lab.drive(session.prompt("Read app/AGENTS.md."))
        except RuntimeError as error:
            self.assertIn("already running", str(error), f"the second prompt raised {error!r}; "
                          "expected RuntimeError('already running').")
            self.assertEqual(build.count, built, "the second prompt() was refused, and it had "
                             "still called the builder: it read the disk in the middle of the "
                             "other run. Check the running flag first; build in the run.")
        else:
            self.fail("a second prompt ran while the first was still running: two runs wrote to "
                      "one log. Keep lesson 12's running flag, checked when prompt() is called.")
        for _ in first:
            pass
        try:
            self.prompt(session, "Read app/AGENTS.md.")
        except RuntimeError as error:
            self.fail(f"after the first run ended, the next prompt raised {error!r}: clear the "
                      "running flag when the run ends.")

    def test_a_builder_that_fails_does_not_block(self):
        """prompt() returns its run without calling the builder; a builder that raises ends that
        prompt at the run's first step with its exception, the same one, before any request is
        sent or any line written to the log; and the Session is not left running: the next
        prompt() runs."""
        ws, tools, clock, build = _world()
        unreadable = OSError("AGENTS.md could not be read")
        failures = []

        def flaky():
            if not failures:
                failures.append(True)
                raise unreadable
            return build()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        log = harness.SessionLog(ws, LOG)
        session = self.session(model, flaky, tools, log)
        try:
            run = session.prompt("Read AGENTS.md.")
        except Exception as error:
            self.fail(f"session.prompt(...) raised {type(error).__name__}: {error} when it was "
                      "called, before its run took a step: the prompt was built in prompt(). "
                      "Build it in the run, the first thing inside the try whose finally clears "
                      "the running flag, so the builder reads the disk when the run starts.")
        self.assertEqual(failures, [], "session.prompt(...) called the builder before its run "
                         "took a step: the prompt was built in prompt(), not in the run. Build it "
                         "in the run, the first thing inside the try whose finally clears the "
                         "running flag.")
        try:
            lab.drive(run)
        except Exception as error:
            self.assertIs(error, unreadable, f"the builder's OSError came out as "
                          f"{type(error).__name__}: {error}; let it go up to the caller as it is, "
                          "unwrapped.")
        else:
            self.fail("the builder raised OSError and the prompt ended without it: the error was "
                      "swallowed, and the caller never learns that AGENTS.md could not be read. "
                      "Do not catch the builder's error; let it end the prompt.")
        self.assertEqual(len(model.calls), 0, f"the builder raised, and the Session still sent "
                         f"{len(model.calls)} request(s) to the model, without the prompt it "
                         "failed to build. The error ends the prompt before anything is sent.")
        written = [m.get("role") for m in log.replay()]
        self.assertEqual(written, [], f"the builder raised, and the log now holds {written}: a "
                         "prompt that never ran left a message behind, which the next prompt "
                         "will send. Build first; nothing is written until the run starts.")
        running = getattr(session, "is_running", None)
        self.assertIs(running, False, f"after the builder raised, session.is_running is "
                      f"{running!r}: the Session is stuck, and every later prompt is refused. "
                      "Build the prompt in the run, inside the try whose finally clears the flag.")
        try:
            self.prompt(session, "Read AGENTS.md.")
        except RuntimeError as error:
            self.fail(f"after the builder raised once, the next prompt raised {error!r}.")

    def test_log_saves_messages(self):
        """With a builder, every message of a prompt is saved to the log (lesson 11): after one
        prompt the rebooted disk's log replays the user's message, the call, its result and the
        answer."""
        ws, tools, clock, build = _world()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG))
        self.prompt(session, "Read AGENTS.md.")
        disk = ws.reboot()
        self.assertTrue(disk.exists(LOG), f"after a prompt there is no {LOG}: nothing was saved. "
                        "Every Harness the Session makes saves to the log: subscribe "
                        "persist_to(self.log) to it, as in lesson 12.")
        roles = [m["role"] for m in harness.SessionLog(disk, LOG).replay()]
        want = ["user", "assistant", "toolResult", "assistant"]
        self.assertEqual(roles, want, f"after one prompt the log replays the roles {roles}; "
                         f"expected {want}: every message the run made, saved as it ended.")

    def test_keeps_no_prompt(self):
        """When a prompt ends the Session keeps no copy of the system prompt it built: no text
        holding it is left in its attributes, nor nested in the lists, tuples, sets, dicts or
        objects (a kept Harness, say) they hold; so no later prompt can reuse a stale one. (The
        model it was given is not searched: it saw the prompt on purpose.)"""
        ws, tools, clock, build = _world()
        model = lab.capped(lab.ScriptedModel([lab.forever(_reader)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG))
        self.prompt(session, "Read AGENTS.md.")
        where = _holding_prompt(session, skip=[model])
        self.assertIsNone(where, f"after a prompt the Session still holds the system prompt it "
                          f"built, at {where}. Keep the text in a local variable of the run and "
                          "pass it to _harness: the next prompt builds its own.")

    def test_max_turns_still_brakes(self):
        """Lesson 05's brake holds with a builder: with max_turns=2 and a model that never stops
        calling, the prompt makes two model calls and ends with "Agent stopped after
        max_turns=2"."""
        ws, tools, clock, build = _world()

        def runaway(request):
            return lab.reply(lab.call("read", {"path": "AGENTS.md"},
                                      id=f"r{len(request.messages)}"))
        model = lab.capped(lab.ScriptedModel([lab.forever(runaway)]))
        session = self.session(model, build, tools, harness.SessionLog(ws, LOG), max_turns=2)
        self.prompt(session, "Read forever.")
        self.assertEqual(len(model.calls), 2, f"the prompt made {len(model.calls)} model calls "
                         "with max_turns=2; expected 2.")
        stop = session.messages[-1].get("error_message") if session.messages else None
        self.assertEqual(stop, "Agent stopped after max_turns=2", f"the record ends with "
                         f"{stop!r}; expected the max_turns stop.")
        self.assertEqual(len(harness.SessionLog(ws, LOG).replay()), len(session.messages),
                         "the log and the Session disagree on the transcript.")

    def test_keeps_lesson_12_compaction(self):
        """is_overflow and compact, written again here, keep lesson 12's rules: is_overflow is True for a refusal for length and False for another failure; compact with nothing to cut returns False and writes nothing, and with old messages to cut appends one compaction entry replacing them and returns True."""
        for words, want in (("400 prompt is too long: 208310 tokens > 200000 maximum", True),
                            ("529 Overloaded", False)):
            got = self.call("is_overflow", harness.is_overflow, lab.provider_error(words))
            self.assertIs(got, want, f"is_overflow of a failed reply saying {words!r} returned "
                          f"{got!r}; expected {want}.")
        ws = lab.Workspace()
        log = harness.SessionLog(ws, LOG)
        for n in range(6):
            log.append_message(lab.user(f"Step {n}: " + "rename the port " * 20))
            log.append_message(lab.say(f"Done with step {n}. " + "The port is renamed. " * 20))
        model = lab.ScriptedModel([lab.summariser()])
        before = ws.read_text(LOG)
        got = self.call("compact", harness.compact, log, model, 1_000_000)
        kept = ws.read_text(LOG) == before
        self.assertEqual((got, len(model.calls), kept), (False, 0, True),
                         f"with nothing to cut compact returned {got!r}, asked the model "
                         f"{len(model.calls)} time(s) and {'left' if kept else 'changed'} the "
                         "log; expected False, no call, the log as it was.")
        rows = log.rows()
        cut = harness.find_cut([m for _, m in rows], 200)
        got = self.call("compact", harness.compact, log, model, 200)
        new = log.entries()[len(rows):]
        self.assertEqual((got, [e.get("type") for e in new]), (True, ["compaction"]),
                         f"with old messages to cut compact returned {got!r} and appended "
                         f"{[e.get('type') for e in new]}; expected True and one compaction entry.")
        self.assertEqual(new[0].get("replaces"), [row_id for row_id, _ in rows[:cut]],
                         f"the compaction replaces {new[0].get('replaces')}; expected the ids of "
                         f"the {cut} rows before find_cut's cut.")

