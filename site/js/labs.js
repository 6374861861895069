// Labs: an editor holding the reader's harness.py (at first the lab's starting file), "Run tests"
// (lab_check in the worker, the very runner the downloaded folder uses), the checklist marked
// test by test, and the lab folder as a zip made here in the browser.
import { request, stop } from "./python.js";
import { mountEditor, mountWhenQuiet } from "./editors.js";
import { saved, update, hashText } from "./storage.js";
import { labKey, GAP_OPEN as GAP } from "./names.js";
import { makeZip, download } from "./zip.js";
import { button, element, steadyButton } from "./dom.js";
import { fetchJSON, fetchText, pyPath } from "./files.js";

const STARTING_TITLE = "The file you start from: harness.py";
const MINE_TITLE = "Your harness.py (the starting file, with your code)";
// Seconds one test may take before the run is stopped and that test named: the reference passes
// each in well under a second; only code that never finishes comes near it.
export const TEST_LIMIT = 20;
// The README of the "Take my harness home" zip: the commands, in short.
const TAKE_HOME_README = `# Your agent

harness.py is the harness you wrote in the book; it passed the closing page's last lab.
agent.py runs it on a real model, in one folder of your machine. Python 3.10 or newer,
nothing to install.

    export ANTHROPIC_API_KEY=...                    # Anthropic's Messages API (the default)
    python agent.py --folder ~/myproject "fix the failing test"

    export OPENAI_API_KEY=...                       # OpenAI's Chat Completions
    python agent.py --provider openai --folder ~/myproject "fix the failing test"

    # a local server that speaks Chat Completions (here Ollama): no key
    python agent.py --provider openai --base-url http://localhost:11434/v1 --model qwen3 "..."

    python agent.py --folder ~/myproject --resume   # after Ctrl-C, a kill or a failure
    python agent.py --folder ~/myproject --resume "now run the linter too"

It asks before every write and every command (--yes: never; --allow read,bash: those tools
never ask). The first Ctrl-C stops it at once. The session is in FOLDER/.agent/session.jsonl.
python agent.py --help lists every option.
`;

class Lab {
  constructor(section) {
    this.section = section;
    const data = JSON.parse(section.querySelector(".lab-data").textContent);
    // A lesson is a number (11); a side quest keeps its id ("S2"), as cells.js does.
    this.lesson = /^\d+$/.test(String(data.lesson)) ? Number(data.lesson) : String(data.lesson);
    this.number = Number(data.lab);
    this.key = labKey(this.lesson, this.number);
    this.tests = data.tests;
    this.takeHomeFiles = Array.isArray(data.take_home) ? data.take_home : [];
    this.code = section.querySelector(".lab-starting");
    this.starting = this.code.textContent;    // the starting file is on the page once: here
    section.bookLab = this;                    // for print.js: is the file the reader's own?
    this.list = section.querySelector(".lab-tests");
    this.editor = null;
    this.build();
    this.restore();
  }

  build() {
    const bar = document.createElement("div");
    bar.className = "lab-bar";
    this.runButton = steadyButton("Run tests", "lab-run", () => this.runTests());
    this.stopButton = button("Stop", "lab-stop", () => this.stop("you pressed Stop"));
    this.stopButton.hidden = true;
    this.resetButton = button("Reset to the starting file", "lab-reset", () => this.reset());
    this.downloadButton = button("Download this lab's folder (.zip)", "lab-download", () => this.download());
    bar.append(this.runButton, this.stopButton, this.resetButton, this.downloadButton);
    if (this.takeHomeFiles.length) {
      // The closing page's last lab: once it passes, the reader's harness and agent.py in one zip.
      this.takeHomeButton = button("Take my harness home", "lab-take-home", () => this.takeHome());
      this.takeHomeButton.hidden = true;
      bar.append(this.takeHomeButton);
    }
    this.code.after(bar);
    // Finding one's way in a long file: the gaps, a search, and room to see more of it.
    const tools = document.createElement("div");
    tools.className = "lab-tools";
    this.gapButton = button("Next gap", "lab-next-gap", () => this.nextGap());
    this.searchButton = button("Search in the file", "lab-search", () => this.withEditor((editor) => editor.search()));
    this.tallButton = button("Taller editor", "lab-tall", () => this.toggleTall());
    this.tallButton.setAttribute("aria-pressed", "false");
    tools.append(this.gapButton, this.searchButton, this.tallButton);
    this.code.before(tools);
    this.title = this.section.querySelector(".lab-file h3");
    this.report = document.createElement("div");
    this.report.className = "lab-report";
    this.report.setAttribute("aria-live", "polite");
    // The verdict comes first, above the tests it sums up.
    if (this.list) this.list.before(this.report);
    else bar.after(this.report);
    const open = () => this.openEditor().then(() => this.editor && this.editor.focus());
    this.code.tabIndex = 0;
    this.code.addEventListener("pointerdown", open, { once: true });
  }

  restore() {
    const mine = saved("labs", this.key);
    if (mine && typeof mine.code === "string") {
      this.code.textContent = mine.code;
      if (mine.base && mine.base !== hashText(this.starting)) this.offerNewVersion();
      this.openEditor();
    }
    this.retitle(this.currentText());
    if (mine && mine.passed) {
      this.section.dataset.passed = "true";
      this.showPassedBefore(mine);
    }
    this.showDone(Boolean(mine && mine.passed));
  }

  /** A lab passed on an earlier visit reads as passed: the verdict, and the ticks if the file is
   * still the one that passed. */
  showPassedBefore(mine) {
    const items = this.items();
    const same = mine.passedCode === undefined || mine.passedCode === this.currentText();
    if (same) {
      for (const li of items) li.dataset.status = "pass";
      this.section.dataset.state = "pass";
      this.report.replaceChildren(element("p", "lab-summary",
        `All ${items.length} tests passed when you last ran them, on this file.`));
    } else {
      this.report.replaceChildren(element("p", "lab-summary",
        "You passed this lab before. Your file has changed since: run the tests again to check it."));
    }
  }

  /** The heading over the file says whose it is: the starting file, or the reader's. */
  retitle(text) {
    if (this.title) this.title.textContent = text === this.starting ? STARTING_TITLE : MINE_TITLE;
  }

  /** Run `act(editor)` once the editor is there (a click on a tool opens it). */
  withEditor(act) {
    return this.openEditor().then(() => this.editor && act(this.editor));
  }

  /** The cursor to the next gap after it, wrapping round; the editor's box scrolls to it. */
  nextGap() {
    this.withEditor((editor) => {
      const line = editor.lineOf(GAP, editor.cursorLine() + 1);
      if (line) editor.showLine(line, { scroller: this.holder(), focus: true });
      else this.gapButton.textContent = "No gaps left";
    });
  }

  toggleTall() {
    const tall = this.section.classList.toggle("is-tall");
    this.tallButton.setAttribute("aria-pressed", String(tall));
  }

  /** A long file opens at its first gap: the editor's box scrolls there, the page does not
   * move. Lines are measured only once they are drawn on screen, so the box is scrolled again
   * when it first comes into view, unless the reader has touched it by then. */
  openAtGap(editor) {
    const gap = editor.lineOf(GAP);
    const box = this.holder();
    if (!gap || !box) return;
    let touched = false;
    const touch = () => { touched = true; };
    box.addEventListener("pointerdown", touch, { once: true });
    box.addEventListener("keydown", touch, { once: true });
    const place = () => { if (!touched) editor.showLine(gap, { scroller: box }); };
    requestAnimationFrame(place);
    const seen = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return;
      seen.disconnect();
      requestAnimationFrame(place);
    });
    seen.observe(box);
  }

  /** The box that scrolls the editor (its .code-editor holder). */
  holder() {
    return this.section.querySelector(".code-editor");
  }

  /** Show line `number` of the reader's file in the editor, with the cursor on it. */
  showLine(number) {
    this.withEditor((editor) => {
      this.holder()?.scrollIntoView({ block: "nearest" });
      editor.showLine(number, { scroller: this.holder(), focus: true });
    });
  }

  offerNewVersion() {
    const notice = document.createElement("p");
    notice.className = "lab-notice";
    notice.textContent = "This lab's starting file has changed since you edited it. Your harness.py is kept. ";
    notice.append(
      button("Start again from the new starting file", "lab-take-new", () => { this.reset(); notice.remove(); }),
      button("Keep mine", "lab-keep", () => { update("labs", this.key, { base: hashText(this.starting) }); notice.remove(); }));
    this.code.before(notice);
  }

  openEditor() {
    this.opening ??= mountEditor(this.code, this.currentText(), {
      label: `harness.py for lab ${this.lesson}.${this.number}`,
      onRun: () => this.runTests(),
      onChange: (text) => this.edited(text),
    }).then((editor) => {
      this.editor = editor;
      this.openAtGap(editor);
    });
    return this.opening;
  }

  currentText() {
    if (this.editor) return this.editor.getText();
    const mine = saved("labs", this.key);
    return mine && typeof mine.code === "string" ? mine.code : this.starting;
  }

  edited(text) {
    this.retitle(text);
    if (text === this.starting) update("labs", this.key, { code: undefined, base: undefined });
    else update("labs", this.key, { code: text, base: hashText(this.starting) });
  }

  reset() {
    if (this.editor) this.editor.setText(this.starting);
    else this.code.textContent = this.starting;
    this.retitle(this.starting);
    update("labs", this.key, { code: undefined, base: undefined });
  }

  showDone(passed) {
    for (const done of this.section.querySelectorAll(".lab-done, [data-lab-done]")) done.hidden = !passed;
    if (this.takeHomeButton) this.takeHomeButton.hidden = !passed;
  }

  item(id) {
    if (!this.list) return null;
    for (const li of this.list.querySelectorAll("li[data-test]")) {
      const test = li.dataset.test;
      if (id === test || id.endsWith(`.${test}`)) return li;
    }
    return null;
  }

  /** The checklist's items, in the order the tests run. */
  items() {
    return this.list ? [...this.list.querySelectorAll("li[data-test]")] : [];
  }

  /** Forget the last run's ticks and messages: a run starts from a blank checklist. */
  clearTicks() {
    for (const li of this.items()) {
      li.dataset.status = "";
      li.querySelector(".test-message")?.remove();
      li.querySelector(".test-same")?.remove();
      li.querySelectorAll(".test-line").forEach((link) => link.remove());
    }
  }

  async runTests() {
    if (this.running) return;
    this.running = true;
    this.cancelled = null;
    this.started = false;
    this.finished = new Set();   // the checklist items whose test has reported
    this.runButton.setAttribute("aria-disabled", "true");   // not .disabled: focus stays on it
    this.stopButton.hidden = false;
    this.section.dataset.state = "running";
    this.clearTicks();
    this.report.textContent = "Running the tests…";
    const text = this.currentText();
    const limit = () => {   // a fresh TEST_LIMIT for each test, from its start
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.stop("time"), TEST_LIMIT * 1000);
    };
    const result = await request(
      { type: "test", lesson: this.lesson, lab: this.number, tests: this.tests, harness: text },
      {
        // python.js's own limit is only the backstop of this one, per test
        timeout: TEST_LIMIT * (this.items().length + 1) + 30,
        cancelled: () => this.cancelled,   // stopped while it waited its turn: never posted
        onStart: () => {
          this.started = true;
          limit();
        },
        onProgress: (test) => {
          limit();
          const li = this.item(String(test.id));
          if (li) {
            this.finished.add(li);
            li.dataset.status = test.status === "pass" ? "pass" : "fail";
          }
        },
      });
    clearTimeout(this.timer);
    this.running = false;
    this.runButton.removeAttribute("aria-disabled");
    this.stopButton.hidden = true;
    const stopped = this.cancelled ?? (result.stoppedBy || result.type === "stopped" ? "time" : null);
    if (result.type === "results" && !result.stoppedBy) this.show(result.results, text);
    else if (stopped) this.showStopped(stopped);
    else {
      this.section.dataset.state = "failed";
      this.report.textContent = `The tests could not run: ${result.reason}`;
    }
  }

  /** Stop the run: `why` is "time" (a test passed TEST_LIMIT) or what the reader did. */
  stop(why) {
    if (!this.running || this.cancelled) return;
    this.cancelled = why;
    if (this.started) stop(why === "time" ? `the ${TEST_LIMIT} s limit of one test` : why);
  }

  /** Say which test the stop cut short, in a sentence, under the ticks of those that finished. */
  showStopped(why) {
    this.section.dataset.state = "failed";
    const cut = this.started ? this.items().find((li) => !this.finished.has(li)) : null;
    const name = cut ? `“${cut.textContent.trim()}”` : null;
    let sentence;
    if (why === "time") {
      sentence = `${name ?? "A test"} did not finish: your code did not finish within ${TEST_LIMIT} s, so the tests were stopped. ` +
        "Look for a loop that never ends, or a call that waits for ever, in the code this test runs.";
    } else {
      sentence = name ? `You stopped the tests while they ran ${name}.` : "You stopped the tests before they started.";
    }
    if (cut) {
      cut.dataset.status = "fail";
      cut.append(element("p", "test-message", why === "time" ? `Did not finish within ${TEST_LIMIT} s.` : "Stopped."));
    }
    this.report.replaceChildren(element("p", "lab-summary", sentence));
  }

  show(results, text) {
    this.clearTicks();
    this.report.textContent = "";
    const failures = results.filter((result) => result.status !== "pass");
    const groups = sameFailures(failures);
    const grouped = new Map(groups.flatMap((group) => group.results.map((result) => [result, group])));
    for (const result of results) {
      const li = this.item(String(result.id));
      const ok = result.status === "pass";
      const group = grouped.get(result);
      if (li) {
        li.dataset.status = ok ? "pass" : "fail";
        // A failure said once above is pointed at, not repeated; what the test printed is its own.
        if (group) li.append(element("p", "test-same", pointer(group, groups.length)));
        const own = group ? group.own.get(result) : result.message;
        if (!ok && own) li.append(element("pre", "test-message", own), ...this.lineLinks(own, result.goto));
      } else if (!ok && !group) {
        // Not a test of the list: the harness did not import, or the runner itself reported.
        this.report.append(element("pre", "lab-error", result.message || result.sentence || String(result.id)));
      }
    }
    // The failures many tests share, once each, under the verdict and above the tests.
    this.report.prepend(...groups.map((group) => {
      const block = sharedBlock(group, results.length);
      const places = new Set(group.results.map((result) => JSON.stringify(result.goto ?? null)));
      block.append(...this.lineLinks(group.shared, places.size === 1 ? group.results[0].goto : null));
      return block;
    }));
    const passed = results.length - failures.length;
    const total = this.list ? this.list.querySelectorAll("li[data-test]").length : results.length;
    const all = results.length > 0 && failures.length === 0 && passed >= total;
    const summary = element("p", "lab-summary", all ? `All ${passed} tests pass.` : `${passed} passed, ${failures.length} failed.`);
    this.report.prepend(summary);
    this.section.dataset.state = all ? "pass" : "fail";
    this.section.dataset.passed = String(all || this.section.dataset.passed === "true");
    // solution.js counts the runs without a pass (after three, it offers the book's answer)
    this.section.dispatchEvent(new CustomEvent("book:lab-run", { bubbles: true, detail: { lab: this.key, passed: all } }));
    // Every test failed on the way is kept (the review page lists the rules they state); not a
    // file that did not import, nor a name it lacks: those broke no rule of the test's.
    const failed = failures.filter(brokeItsRule).map((result) => String(result.id)).filter((id) => this.item(id));
    const before = saved("labs", this.key)?.failed || [];
    if (failed.some((id) => !before.includes(id))) update("labs", this.key, { failed: [...new Set([...before, ...failed])] });
    if (all) {
      update("labs", this.key, { passed: true, passedCode: text, useMine: saved("labs", this.key)?.useMine ?? true });
      this.showDone(true);
      this.section.dispatchEvent(new CustomEvent("book:lab-passed", { bubbles: true, detail: { lab: this.key } }));
    }
  }

  /** A button to each line of the reader's file that a failure names ("harness.py, line 12");
   * for a failure worded by its test, with no line, one to the function of the reader's it is
   * about (`goto`, from lab_check: {name: "run_agent", line: 12}). */
  lineLinks(message, goto = null) {
    const lines = [...new Set([...String(message).matchAll(/harness\.py, line (\d+)/g)].map((m) => Number(m[1])))];
    if (!lines.length && goto) {
      return [button(`Go to ${goto.name}, line ${goto.line}`, "test-line", () => this.showLine(goto.line))];
    }
    return lines.slice(0, 3).map((number) =>
      button(`Show line ${number} in your file`, "test-line", () => this.showLine(number)));
  }

  async download() {
    try {
      const listing = await fetchJSON(pyPath("files.json"));
      const files = (Array.isArray(listing) ? listing : listing.files).filter((name) => name.startsWith("lab/"));
      const folder = `lesson-${String(this.lesson).padStart(2, "0")}`;
      const tests = pyPath(this.tests);
      const entries = [
        [`${folder}/harness.py`, this.currentText()],
        [`${folder}/tests.py`, await fetchText(tests)],
      ];
      for (const name of files) entries.push([`${folder}/${name}`, await fetchText(pyPath(name))]);
      download(makeZip(entries), `${folder}-lab-${this.number}.zip`);
    } catch (error) {
      this.report.textContent = `The download could not be made: ${error.message}`;
    }
  }

  /** One zip to run at home: the harness that passed (the editor's text if it has not been kept),
   * the page's extra files (agent.py) and a README of the commands, in a folder my-agent/. */
  async takeHome() {
    try {
      const harness = saved("labs", this.key)?.passedCode ?? this.currentText();
      const entries = [["my-agent/harness.py", harness], ["my-agent/README.md", TAKE_HOME_README]];
      for (const path of this.takeHomeFiles) {
        entries.push([`my-agent/${path.split("/").pop()}`, await fetchText(path)]);
      }
      download(makeZip(entries), "my-agent.zip");
    } catch (error) {
      this.report.textContent = `The download could not be made: ${error.message}`;
    }
  }
}

// ------------------------------------------------------------------ failures that many tests share

/** The failures at least two tests share, in the order of their first test: the same message word
 * for word (a harness that does not import fails every test alike), or the same `cause`, which
 * lab_check gives a failure when, and only when, a name the reader's harness lacks made it
 * ("harness.py has no SessionLog"; never a value that was None, nor an error raised on a line of
 * the reader's own). Each group has its results, the text shown once (`shared`: the message when
 * they are all alike, else the cause), a short `label` to point at it with, and what of each
 * test's failure is still its own (`own`: what it printed, lab_check's `printed`). Failures that
 * differ in anything else are never merged: each keeps its message under its test. */
function sameFailures(failures) {
  const byKey = new Map();
  for (const result of failures) {
    if (!result.message && !result.cause) continue;
    const key = result.cause ? `cause ${result.cause}` : `message ${result.message}`;
    if (!byKey.has(key)) byKey.set(key, { cause: result.cause || null, results: [] });
    byKey.get(key).results.push(result);
  }
  const groups = [];
  for (const { cause, results } of byKey.values()) {
    if (results.length < 2) continue;
    const first = results[0].message;
    const alike = results.every((result) => result.message === first);
    const shared = alike || !cause ? first : cause;
    const own = new Map(results.map((result) => [result, alike ? "" : result.printed || ""]));
    groups.push({ results, shared, own, label: cause ?? first.split("\n")[0].replace(/[.:;,]+$/, "") });
  }
  return groups;
}

/** "All 8 tests fail the same way:" or "5 of 8 tests fail the same way:", then the failure once. */
function sharedBlock(group, total) {
  const count = group.results.length;
  const who = count < total ? `${count} of ${total} tests` : count === 2 ? "Both tests" : `All ${count} tests`;
  const block = element("div", "lab-same");
  block.append(element("p", "lab-same-head", `${who} fail the same way:`),
               element("pre", "lab-error", group.shared));
  return block;
}

/** The line a test shows instead of a failure said above; with several above, which one. */
function pointer(group, groups) {
  return groups > 1 ? `Same failure as above: ${group.label}.` : "Same failure as above.";
}

export const labs = [];

export function init() {
  for (const section of document.querySelectorAll("section.lab[data-lab]")) {
    try {
      labs.push(new Lab(section));
    } catch (error) {
      console.error(`lab ${section.id}: ${error.message}`);
    }
  }
  if (labs.length) {
    mountWhenQuiet(() => labs.forEach((lab) => lab.openEditor()));
  }
}

/** A failed result whose test ran against the reader's code: not "does not import", not a name
 * the file lacks. */
function brokeItsRule(result) {
  if (result.status === "fail") return true;
  return result.status === "error" && !result.cause && !/ does not import: /.test(String(result.message || ""));
}
