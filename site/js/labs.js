// Labs: an editor holding the reader's harness.py (at first the lab's starting file), "Run tests"
// (lab_check in the worker, the very runner the downloaded folder uses), the checklist marked
// test by test, and the lab folder as a zip made here in the browser.
import { request } from "./python.js";
import { mountEditor, mountWhenQuiet } from "./editors.js";
import { saved, update, hashText } from "./storage.js";
import { makeZip, download } from "./zip.js";
import { button, element, steadyButton } from "./dom.js";

const SITE = new URL("../../", import.meta.url);
const TEST_TIMEOUT = 60; // seconds for a whole lab's tests

async function fetchText(path) {
  const response = await fetch(new URL(path, SITE));
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.text();
}

class Lab {
  constructor(section) {
    this.section = section;
    const data = JSON.parse(section.querySelector(".lab-data").textContent);
    this.lesson = Number(data.lesson);
    this.number = Number(data.lab);
    this.key = `${this.lesson}-${this.number}`;
    this.tests = data.tests;
    this.code = section.querySelector(".lab-starting");
    this.starting = this.code.textContent;    // the starting file is on the page once: here
    this.list = section.querySelector(".lab-tests");
    this.editor = null;
    this.build();
    this.restore();
  }

  build() {
    const bar = document.createElement("div");
    bar.className = "lab-bar";
    this.runButton = steadyButton("Run tests", "lab-run", () => this.runTests());
    this.resetButton = button("Reset to the starting file", "lab-reset", () => this.reset());
    this.downloadButton = button("Download this lab's folder (.zip)", "lab-download", () => this.download());
    bar.append(this.runButton, this.resetButton, this.downloadButton);
    this.code.after(bar);
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
    if (mine && mine.passed) this.section.dataset.passed = "true";
    this.showDone(Boolean(mine && mine.passed));
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
    }).then((editor) => { this.editor = editor; });
    return this.opening;
  }

  currentText() {
    if (this.editor) return this.editor.getText();
    const mine = saved("labs", this.key);
    return mine && typeof mine.code === "string" ? mine.code : this.starting;
  }

  edited(text) {
    if (text === this.starting) update("labs", this.key, { code: undefined, base: undefined });
    else update("labs", this.key, { code: text, base: hashText(this.starting) });
  }

  reset() {
    if (this.editor) this.editor.setText(this.starting);
    else this.code.textContent = this.starting;
    update("labs", this.key, { code: undefined, base: undefined });
  }

  showDone(passed) {
    for (const done of this.section.querySelectorAll(".lab-done, [data-lab-done]")) done.hidden = !passed;
  }

  item(id) {
    if (!this.list) return null;
    for (const li of this.list.querySelectorAll("li[data-test]")) {
      const test = li.dataset.test;
      if (id === test || id.endsWith(`.${test}`)) return li;
    }
    return null;
  }

  async runTests() {
    if (this.running) return;
    this.running = true;
    this.runButton.disabled = true;
    this.section.dataset.state = "running";
    this.report.textContent = "Running the tests…";
    const text = this.currentText();
    const result = await request(
      { type: "test", lesson: this.lesson, lab: this.number, tests: this.tests, harness: text },
      { timeout: TEST_TIMEOUT });
    this.running = false;
    this.runButton.disabled = false;
    if (result.type === "results") this.show(result.results, text);
    else {
      this.section.dataset.state = "failed";
      this.report.textContent = result.type === "stopped"
        ? `The tests were stopped: ${result.reason}.` : `The tests could not run: ${result.reason}`;
    }
  }

  show(results, text) {
    for (const li of this.list ? this.list.querySelectorAll("li[data-test]") : []) {
      li.dataset.status = "";
      li.querySelector(".test-message")?.remove();
      li.querySelector(".test-same")?.remove();
    }
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
        if (!ok && own) li.append(element("pre", "test-message", own));
      } else if (!ok && !group) {
        // Not a test of the list: the harness did not import, or the runner itself reported.
        this.report.append(element("pre", "lab-error", result.message || result.sentence || String(result.id)));
      }
    }
    // The failures many tests share, once each, under the verdict and above the tests.
    this.report.prepend(...groups.map((group) => sharedBlock(group, results.length)));
    const passed = results.length - failures.length;
    const total = this.list ? this.list.querySelectorAll("li[data-test]").length : results.length;
    const all = results.length > 0 && failures.length === 0 && passed >= total;
    const summary = element("p", "lab-summary", all ? `All ${passed} tests pass.` : `${passed} passed, ${failures.length} failed.`);
    this.report.prepend(summary);
    this.section.dataset.state = all ? "pass" : "fail";
    this.section.dataset.passed = String(all || this.section.dataset.passed === "true");
    if (all) {
      update("labs", this.key, { passed: true, passedCode: text, useMine: saved("labs", this.key)?.useMine ?? true });
      this.showDone(true);
    }
  }

  async download() {
    try {
      const listing = JSON.parse(await fetchText("py/files.json"));
      const files = (Array.isArray(listing) ? listing : listing.files).filter((name) => name.startsWith("lab/"));
      const folder = `lesson-${String(this.lesson).padStart(2, "0")}`;
      const tests = this.tests.startsWith("py/") ? this.tests : `py/${this.tests}`;
      const entries = [
        [`${folder}/harness.py`, this.currentText()],
        [`${folder}/tests.py`, await fetchText(tests)],
      ];
      for (const name of files) entries.push([`${folder}/${name}`, await fetchText(`py/${name}`)]);
      download(makeZip(entries), `${folder}-lab-${this.number}.zip`);
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
