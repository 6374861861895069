// Starts the page's Python before anything else. Loaded with <script type="module" async> in
// the page's <head>, it runs as soon as it arrives, while the rest of the HTML is still being
// read, and imports nothing (each import would be one more round trip before the worker starts).
// python.js adopts this worker and the messages it sent meanwhile.
if (!globalThis.bookPythonBoot) {
  const interrupt = globalThis.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
  performance.mark("book:worker-start");
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module", name: "python" });
  const early = [];
  worker.onmessage = ({ data }) => early.push(data);
  worker.onerror = (event) => {
    event.preventDefault();
    early.push({ type: "status", state: "failed", reason: event.message || "the Python worker could not start" });
  };
  worker.postMessage({ type: "init", interrupt, lesson: document.documentElement.dataset.lesson ?? null });
  globalThis.bookPythonBoot = { worker, interrupt, early };
}
