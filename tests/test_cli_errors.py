"""Every error an author can meet at the command line or in a config file is one sentence that
names the place, never a traceback (docs/authoring.md, "When the build stops"). Each test asserts
the whole sentence, so a regression in its tail is seen too."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from builder import course as course_stage, tau
from builder.errors import BuildError
from builder.project import Project
from builder.snapshot import SnapshotError

import stages

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "book"
AGAIN = "run `python build.py cite --tau PATH-TO-TAU` to write it again"


def _cli():
    spec = importlib.util.spec_from_file_location("build_cli", ROOT / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cli = _cli()


@pytest.fixture
def book(tmp_path) -> Path:
    copy = tmp_path / "book"
    shutil.copytree(FIXTURE, copy)
    return copy


def said(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_run_with_a_file_that_does_not_exist(capsys, tmp_path):
    missing = tmp_path / "missing.py"
    assert said(capsys, ["--root", str(FIXTURE), "run", "--lesson", "1", str(missing)]) == \
        (1, "", f"build.py run: {missing}: no such file\n")


def test_run_with_a_folder_or_a_file_that_is_not_utf8(capsys, tmp_path):
    assert said(capsys, ["--root", str(FIXTURE), "run", "--lesson", "1", str(tmp_path)]) == \
        (1, "", f"build.py run: {tmp_path} is a folder; give the file to run\n")
    latin = tmp_path / "latin.py"
    latin.write_bytes("print('café')\n".encode("latin-1"))
    assert said(capsys, ["--root", str(FIXTURE), "run", "--lesson", "1", str(latin)]) == \
        (1, "", f"build.py run: {latin}: not UTF-8 text (byte 0xe9 at offset 10); save it as UTF-8\n")


def test_stages_with_a_point_the_course_does_not_have(capsys):
    points = ", ".join(stages.load().points)
    assert stages.main(["starting", "99.1"]) == 2
    assert capsys.readouterr() == ("", f"stages.py: 99.1 is not a stage point; the points are {points}\n")
    assert stages.main(["diff", "11"]) == 2
    assert capsys.readouterr() == ("", f"stages.py: 11 is not a stage point; the points are {points}\n")


def load_error(book: Path, text: str, capsys) -> str:
    """The sentence the course loader stops with, checked to be all `build.py` prints for it."""
    (book / "lessons" / "course.yaml").write_text(text)
    with pytest.raises(BuildError) as caught:
        course_stage.load(Project.at(book))
    assert said(capsys, ["--root", str(book), "wrong", "--lesson", "1"]) == (1, "", f"{caught.value}\n")
    return str(caught.value)


def test_an_empty_course_file(book, capsys):
    assert load_error(book, "", capsys) == ("lessons/course.yaml: the course file holds no mapping: it needs "
                                    "tau: (repo and commit) and pages: (a list, one entry a page)")


def test_a_page_entry_that_is_not_a_mapping(book, capsys):
    text = (book / "lessons" / "course.yaml").read_text().replace("pages:\n", "pages:\n  - 11\n", 1)
    line = text.splitlines().index("  - 11") + 1
    assert load_error(book, text, capsys) == (f"lessons/course.yaml:{line}: page entry 1 is 11, not a mapping: "
                                      "a page is id:, kind:, title: and folder:")


def test_pages_that_are_not_a_list(book, capsys):
    text = (book / "lessons" / "course.yaml").read_text()
    text = text[:text.index("pages:")] + "pages: 11\n"
    assert load_error(book, text, capsys) == "lessons/course.yaml:3: pages: is a list, one entry a page"


def test_a_lock_left_with_a_merge_conflict(book):
    lock = book / "lessons" / "tau.lock.json"
    lock.write_text("<<<<<<< HEAD\n" + lock.read_text() + "=======\n{}\n>>>>>>> theirs\n")
    with pytest.raises(BuildError) as caught:
        tau.read(book / "lessons")
    assert str(caught.value) == (f"lessons/tau.lock.json:1: not valid JSON (Expecting value, "
                                 f"column 1); {AGAIN}")


def test_a_lock_without_its_commit(book):
    lock = book / "lessons" / "tau.lock.json"
    lock.write_text(json.dumps({"citations": {}}))
    with pytest.raises(BuildError) as caught:
        tau.read(book / "lessons")
    assert str(caught.value) == ('lessons/tau.lock.json:1: a lock holds "commit" (a string) and '
                                 f'"citations" (an object); {AGAIN}')


def test_a_tool_that_fails_is_one_line_from_build_py(capsys, monkeypatch, tmp_path):
    """SearchError, SnapshotError, AssetError and DistError share ToolError, which build.py says."""
    def no_node(*args, **kwargs):
        raise SnapshotError("node is not on PATH: the snapshot is made with Node")
    monkeypatch.setattr(cli, "build", no_node)
    assert said(capsys, ["--root", str(FIXTURE), "--out", str(tmp_path / "_site")]) == \
        (1, "", "build.py: node is not on PATH: the snapshot is made with Node\n")


def test_cite_with_a_path_that_is_no_repository_blames_the_path(capsys, book, tmp_path):
    pin = course_stage.load(Project.at(book)).tau_commit[:12]
    missing, plain, empty = tmp_path / "nowhere", tmp_path / "plain", tmp_path / "empty"
    plain.mkdir()
    empty.mkdir()
    import subprocess
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    for path, sentence in [
            (missing, f"{missing}: no such folder; give the path of a copy of Tau"),
            (plain, f"{plain} is not a git repository; give the path of a copy of Tau (bare or not)"),
            (empty, f"{empty} does not hold the pinned commit {pin}: fetch it there (git fetch), or "
                    "give another copy of Tau")]:
        assert said(capsys, ["--root", str(book), "cite", "--tau", str(path)]) == \
            (1, "", f"build.py cite: {sentence}\n")


def test_wrong_for_a_page_that_does_not_exist_says_so(capsys):
    assert said(capsys, ["--root", str(FIXTURE), "wrong", "--lesson", "42"]) == \
        (1, "", "lessons/course.yaml: there is no lesson 42\n")


def test_wrong_for_a_page_without_labs_names_its_entry(capsys):
    line = next(i for i, text in enumerate((FIXTURE / "lessons" / "course.yaml").read_text().splitlines(), 1)
                if text == '  - id: "00"')
    assert said(capsys, ["--root", str(FIXTURE), "wrong", "--lesson", "0"]) == \
        (1, "", f"lessons/course.yaml:{line}: lesson 0 has no labs\n")


def test_mutants_for_a_page_without_labs_or_that_lab_names_its_entry(capsys):
    lines = (FIXTURE / "lessons" / "course.yaml").read_text().splitlines()
    welcome, hello = (lines.index(f'  - id: "{id}"') + 1 for id in ("00", "01"))
    assert said(capsys, ["--root", str(FIXTURE), "mutants", "--lesson", "0"]) == \
        (1, "", f"lessons/course.yaml:{welcome}: page 0 has no labs\n")
    assert said(capsys, ["--root", str(FIXTURE), "mutants", "--lesson", "1", "--lab", "9"]) == \
        (1, "", f"lessons/course.yaml:{hello}: page 1 has no lab 9 (it has 1 to 2)\n")


@pytest.mark.parametrize("given, sentence", [
    ("0", "--jobs=0: a number of worker processes, 1 or more"),
    ("-1", "--jobs=-1: a number of worker processes, 1 or more"),
    ("two", "--jobs=two: not a whole number of worker processes")])
def test_mutants_jobs_is_a_number_of_workers(capsys, given, sentence):
    with pytest.raises(SystemExit) as caught:
        cli.main(["--root", str(FIXTURE), "mutants", "--lesson", "1", "--jobs", given])
    assert caught.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.startswith("usage: build.py mutants ")
    assert err.endswith(f"\nbuild.py mutants: error: argument --jobs: {sentence}\n"), err


@pytest.mark.parametrize("given, sentence", [
    ("-1", "--timeout=-1: a number of seconds above 0 and at most 600"),
    ("nan", "--timeout=nan: a number of seconds above 0 and at most 600"),
    ("inf", "--timeout=inf: a number of seconds above 0 and at most 600"),
    ("ten", "--timeout=ten: not a number of seconds")])
def test_run_timeout_is_read_as_a_cells_timeout_is(capsys, tmp_path, given, sentence):
    cell = tmp_path / "cell.py"
    cell.write_text("print(1)\n")
    with pytest.raises(SystemExit) as caught:
        cli.main(["--root", str(FIXTURE), "run", "--lesson", "1", "--timeout", given, str(cell)])
    assert caught.value.code == 2
    assert capsys.readouterr() == ("", cli.run_parser().format_usage() +
                                   f"build.py run: error: argument --timeout: {sentence}\n")


def test_run_timeout_defaults_to_the_cells_default():
    from builder import options
    assert cli.run_parser().parse_args(["--lesson", "1", "f.py"]).timeout == options.DEFAULT_TIMEOUT
    assert cli.run_parser().parse_args(["--lesson", "1", "--timeout", "2.5", "f.py"]).timeout == 2.5
