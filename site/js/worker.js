// The book's Python: Pyodide in a dedicated module worker, so that a runaway cell can never freeze
// the page. It boots as soon as it is created, fetches the files listed in py/files.json into
// /book, and then runs one request at a time with the very functions the build used
// (cellrun.run_cell, lab_check.run), so a cell prints in the page what it printed in the build.
//
// Protocol (page -> worker):
//   {type: "init", interrupt: Int32Array | null,      the shared interrupt buffer, if isolated,
//    lesson: "11" | "A" | null}                       and the page's lesson (its warm-up cell)
//   {type: "run", id, name, lesson, source, harness}  run a cell; harness: the reader's file text,
//                                                     or null for the book's reference harness
//   {type: "test", id, lesson, lab, tests, harness}   run a lab's tests against the reader's text
//                                                     ({type: "progress", id, result} per test)
// Protocol (worker -> page):
//   {type: "status", state: "booting" | "ready" | "failed", reason?, ms?}
//   {type: "out", id, text}                           output so far, batched
//   {type: "done", id, output, error, dropped}        a cell finished (output: the whole text,
//                                                     capped by cellrun.OUTPUT_CAP where it is
//                                                     printed; dropped: characters not kept)
//   {type: "results", id, results}                    lab_check.run's list of dicts
//   {type: "fail", id, reason, fatal}                 the request could not run; fatal: restart me
// Pyodide's loader is imported in boot(), not here: a static import would be fetched before this
// file runs at all, and the snapshot's download, the critical path, should start first.
const PYODIDE = "../../pyodide/pyodide.mjs";
// A few lines (where the book's files are, and how one is read): small, so fetching it first does
// not hold up the snapshot's download.
import { PY, SITE, fetchJSON, fetchText, pyPath } from "./files.js";

const ROOT = "/book";
const FLUSH_MS = 25; // at most one "out" message per 25 ms: a print loop cannot flood the page

const SNAPSHOT = pyPath("snapshot.bin.gz");

// The Python side lives in harness_py/pagerun.py, written to /book with the book's other files.
// After a restore from the snapshot it is already imported; the random state the snapshot froze
// is seeded afresh, so no two visits share it.
const ENTRY = `
import random, sys
if ${JSON.stringify(ROOT)} not in sys.path:
    sys.path.insert(0, ${JSON.stringify(ROOT)})
import pagerun
random.seed()
`;

let pyodide = null;
let glue = null;
let interrupt = null;
let lesson = null; // the page's lesson, from "init": sent as the worker starts, long before Python is up

const post = (message) => self.postMessage(message);

async function fetchBookFiles() {
  const { files } = await fetchJSON(pyPath("files.json"));
  return Promise.all(files.map(async (name) => [name, await fetchText(pyPath(name))]));
}

const timings = {};

// The snapshot (builder/snapshot.py): the heap of a Pyodide that has already imported the book's
// runtime. On a first visit its download is the critical path, so the status shows how much of
// it has arrived.
async function fetchSnapshot() {
  const response = await fetch(new URL(SNAPSHOT, SITE));
  if (!response.ok) throw new Error(`${SNAPSHOT}: HTTP ${response.status}`);
  const total = Number(response.headers.get("Content-Length")) || 0;
  let loaded = 0;
  let shown = 0;
  const counted = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      loaded += chunk.byteLength;
      if (performance.now() - shown > 100) {
        shown = performance.now();
        post({ type: "status", state: "booting", loaded, total });
      }
      controller.enqueue(chunk);
    },
  }));
  const bytes = await new Response(counted.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  return new Uint8Array(bytes);
}

// Restore from the snapshot (its download already under way); if that fails for any reason (no
// file, another Pyodide build, bad bytes), say so in the console and boot the ordinary way:
// slower, but nothing is lost.
async function loadPython(snapshotDownload, options) {
  const { loadPyodide } = await import(PYODIDE);
  try {
    const snapshot = await snapshotDownload;
    const py = await loadPyodide({ ...options, _loadSnapshot: snapshot });
    timings.snapshot = true;
    return py;
  } catch (error) {
    console.warn(`Python: the snapshot could not be used (${error && error.message || error}); ` +
                 "starting without it");
    timings.snapshot = false;
    return loadPyodide(options);
  }
}

async function boot() {
  const started = performance.now();
  timings.since = performance.timeOrigin; // the worker's own start, epoch ms
  post({ type: "status", state: "booting" });
  // The snapshot (the critical path), Pyodide's loader and the book's Python files are fetched
  // at the same time.
  const snapshot = fetchSnapshot();
  snapshot.catch(() => {}); // a failed download is handled (and said) where it is awaited
  const files = fetchBookFiles();
  const loaded = loadPython(snapshot, {
    indexURL: new URL("../../pyodide/", import.meta.url).href,
    packages: [],
    stdout: (text) => console.log(text),
    stderr: (text) => console.warn(text),
  });
  const [py, contents] = await Promise.all([
    loaded.then((value) => { timings.pyodide = performance.now() - started; return value; }),
    files.then((value) => { timings.files = performance.now() - started; return value; }),
  ]);
  const glueStarted = performance.now();
  for (const [name, text] of contents) {
    const path = `${ROOT}/${name}`;
    py.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    py.FS.writeFile(path, text, { encoding: "utf8" });
  }
  py.runPython(ENTRY);
  const pagerun = py.pyimport("pagerun");
  glue = { runCell: pagerun.run_cell, runTests: pagerun.run_tests, warmTests: pagerun.warm_tests };
  // A throwaway cell before saying ready, on the page's own harness: right after a restore the
  // code is cold, and the reader's first click should not be the one that compiles it.
  const warmStarted = performance.now();
  try { pagerun.warm(lesson); } catch (error) { console.warn(`warm-up: ${error}`); }
  timings.warm = performance.now() - warmStarted;
  pyodide = py;
  if (interrupt) pyodide.setInterruptBuffer(interrupt);
  timings.glue = performance.now() - glueStarted;
  post({ type: "status", state: "ready", ms: Math.round(performance.now() - started), timings });
  // The lab runner, once the reader has had a moment: a cell clicked at once does not wait for
  // unittest to load; a lab run that comes first imports it itself.
  setTimeout(() => { try { glue.warmTests(); } catch (error) { console.warn(`lab_check: ${error}`); } }, 1500);
}

// Output is gathered here and sent at most every FLUSH_MS. It is already capped: cellrun keeps
// the first OUTPUT_CAP characters a cell prints and only counts the rest (harness_py/cellrun.py),
// so a flood never reaches this side at all. A flush the cell asks for (print(..., flush=True),
// as a streamed reply's words are printed) sends what is waiting at once, unless the last message
// went less than FLUSH_FLOOR_MS ago: a word printed just after another, before a pause, must not
// wait for the pause to end, and a loop flushing every character still cannot flood the page.
const FLUSH_FLOOR_MS = 8;

function outputStream(id) {
  let pending = "";
  let last = -Infinity;
  const flush = () => {
    if (pending) post({ type: "out", id, text: pending });
    pending = "";
    last = performance.now();
  };
  const write = (text) => {
    pending += String(text);
    if (performance.now() - last >= FLUSH_MS) flush();
  };
  const flushed = () => {
    if (pending && performance.now() - last >= FLUSH_FLOOR_MS) flush();
  };
  return { write, flush, flushed };
}

function failure(id, error) {
  const python = error && error.constructor && error.constructor.name === "PythonError";
  const reason = python ? String(error.message).trim() : String(error && error.message || error);
  // A Python error here is a bug in the glue or in cellrun; anything else (a wasm trap, a stack
  // overflow in the runtime) may have left Pyodide unusable, so the page starts a new worker.
  post({ type: "fail", id, reason, fatal: !python });
}

function runCell({ id, name, lesson, source, harness }) {
  const stream = outputStream(id);
  try {
    const result = glue.runCell(source, lesson, name, harness ?? undefined, stream.write,
                                stream.flushed);
    const [output, error, dropped] = result.toJs();
    result.destroy();
    stream.flush();
    post({ type: "done", id, output, error, dropped });
  } catch (error) {
    stream.flush();
    failure(id, error);
  }
}

function runTests({ id, lesson, lab, tests, harness }) {
  try {
    const path = tests.startsWith(PY) ? `${ROOT}/${tests.slice(PY.length)}` : tests;
    // Each test's result as it finishes: the page ticks it, and knows which test a stop cut short.
    const report = (text) => post({ type: "progress", id, result: JSON.parse(text) });
    const results = JSON.parse(glue.runTests(harness, lesson, lab, path, report));
    post({ type: "results", id, results });
  } catch (error) {
    failure(id, error);
  }
}

const booted = boot().catch((error) => {
  post({ type: "status", state: "failed", reason: String(error && error.message || error) });
  throw error;
});

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    interrupt = data.interrupt;
    lesson = data.lesson ?? null;
    if (pyodide && interrupt) pyodide.setInterruptBuffer(interrupt);
    return;
  }
  try {
    await booted;
  } catch (error) {
    post({ type: "fail", id: data.id, reason: `Python did not start: ${error.message || error}`, fatal: true });
    return;
  }
  if (data.type === "run") runCell(data);
  else if (data.type === "test") runTests(data);
};
