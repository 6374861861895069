// The page's side of the Python worker: starts it at once, queues requests (one runs at a time),
// streams output back, and stops a run, by the interrupt buffer when the page is cross-origin
// isolated and by ending the worker otherwise (or when the interrupt is not heard in time).
// A stopped or crashed worker is replaced by a fresh one, so the next run always works.
import { showStatus } from "./status.js";
import { DEFAULT_TIMEOUT } from "./names.js";

export { DEFAULT_TIMEOUT };
const GRACE_MS = 700; // how long an interrupted run may take to unwind before the worker is ended
const SIGINT = 2;

let worker = null;
let ready = null;       // a promise: the current worker's Python is ready
let current = null;     // the request running now: {id, onOutput, resolve, timer, stopping}
let queue = Promise.resolve();
let nextId = 1;
let interrupt = null;
let state = "booting";
const listeners = new Set();

function setState(next, reason = "") {
  state = next;
  showStatus(next, reason);
  for (const listener of listeners) listener(next, reason);
}

/** Call `listener(state, reason)` whenever Python's state changes. Returns the undo. */
export function onState(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export const pythonState = () => state;

const MB = 1024 * 1024;
/** "2.1 of 6.3 MB": how much of Python has arrived on a first visit. */
function downloaded(loaded, total) {
  return total ? `${(loaded / MB).toFixed(1)} of ${(total / MB).toFixed(1)} MB` : `${(loaded / MB).toFixed(1)} MB`;
}

export function init() {
  if (!worker) start();
}

/** Start the worker (once per page; again after a stop that had to end it). */
export function start() {
  const boot = globalThis.bookPythonBoot;
  let early = [];
  if (boot && !boot.adopted) {
    // boot.js started it from the page's <head>: take it over with what it has said so far.
    boot.adopted = true;
    ({ worker, interrupt, early } = boot);
  } else {
    interrupt = globalThis.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    if (!performance.getEntriesByName("book:worker-start").length) performance.mark("book:worker-start");
    worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "python" });
    worker.postMessage({ type: "init", interrupt, lesson: document.documentElement.dataset.lesson ?? null });
  }
  setState("booting");
  let settle;
  ready = new Promise((resolve, reject) => { settle = { resolve, reject }; });
  ready.catch(() => {}); // a failed boot is reported through the status and each request
  const receive = (data) => {
    if (data.type === "status") {
      if (data.state === "ready") {
        if (!performance.getEntriesByName("book:python-ready").length) {
          performance.mark("book:python-ready", { detail: data.timings });
        }
        settle.resolve(data.ms);
        setState(current ? "running" : "ready");
      } else if (data.state === "failed") { settle.reject(new Error(data.reason)); setState("failed", data.reason); }
      // How much has arrived, then plain "starting…" once all of it has.
      else if (data.state === "booting" && data.loaded) {
        showStatus("booting", data.total && data.loaded >= data.total ? "" : downloaded(data.loaded, data.total));
      }
      return;
    }
    if (!current || data.id !== current.id) return;
    if (data.type === "out") current.onOutput(data.text);
    else if (data.type === "progress") current.onProgress(data.result);
    else finish(data);
  };
  worker.onmessage = ({ data }) => receive(data);
  worker.onerror = (event) => {
    event.preventDefault();
    const reason = event.message || "the Python worker could not start";
    settle.reject(new Error(reason));
    setState("failed", reason);
    if (current) finish({ type: "fail", reason, fatal: true });
  };
  early.forEach(receive);
  return ready;
}

function finish(message) {
  const request = current;
  if (!request) return;
  clearTimeout(request.timer);
  clearTimeout(request.grace);
  current = null;
  if (message.type === "fail" && message.fatal) restart();
  else if (state === "running") setState("ready");
  request.resolve(message);
}

function restart() {
  worker.terminate();
  start();
}

/**
 * Run one request in the worker: {type: "run", name, lesson, source, harness} or
 * {type: "test", lesson, lab, tests, harness}. Resolves with the worker's answer ("done",
 * "results" or "fail"), or {type: "stopped", reason} when Stop or the time limit ended it, or
 * {type: "cancelled", reason} when cancelled() named a reason before its turn came: a queued
 * request is dropped before it is posted, so stopping it never stops (or restarts) Python.
 * onOutput(text) receives the output as it comes; onProgress(result) each lab test's result as it
 * finishes.
 */
export function request(message, { onOutput = () => {}, onProgress = () => {}, timeout = DEFAULT_TIMEOUT, onStart = () => {},
                                   cancelled = () => null } = {}) {
  const job = queue.then(async () => {
    try {
      await ready;
    } catch (error) {
      return { type: "fail", reason: `Python did not start: ${error.message}` };
    }
    const reason = cancelled();
    if (reason) return { type: "cancelled", reason };
    return new Promise((resolve) => {
      const id = nextId++;
      current = { id, onOutput, onProgress, resolve, timer: 0, grace: 0 };
      if (interrupt) Atomics.store(interrupt, 0, 0);
      current.timer = setTimeout(() => stop(`the ${timeout} s time limit`), timeout * 1000);
      setState("running");
      worker.postMessage({ ...message, id });
      onStart();
    });
  });
  queue = job.catch(() => {});
  return job;
}

/** Stop the request that is running now, if any; `reason` ends up in its output. */
export function stop(reason = "you pressed Stop") {
  const request = current;
  if (!request || request.stopping) return;
  request.stopping = reason;
  const endWorker = () => {
    if (current !== request) return;
    current = null;
    clearTimeout(request.timer);
    restart();
    request.resolve({ type: "stopped", reason });
  };
  if (!interrupt) return endWorker();
  Atomics.store(interrupt, 0, SIGINT);
  // The interrupt is heard at Python's next check; a run that swallows it, or C code that never
  // checks, is ended with its worker.
  request.grace = setTimeout(endWorker, GRACE_MS);
  const resolve = request.resolve;
  request.resolve = (message) => resolve({ ...message, stoppedBy: reason });
}

/** True while a request is running (not merely queued). */
export const busy = () => current !== null;

/** Resolves once Python is ready (with the boot time in ms), for the benchmark and the tests. */
export const whenReady = () => ready;
