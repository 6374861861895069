// Pyodide parity in one Node process: boot Python as the page's worker does (from the build's
// memory snapshot, or the plain way), put the site's py/ files under /book, and run every job of
// JOBS_FILE through pagerun, the page's own way in. Prints one JSON line per job.
//
//   node tests/parity.mjs PYODIDE_DIR PY_DIR snapshot|plain JOBS_FILE
//
// A job is {kind: "cell", lesson, id, source} or {kind: "lab", lesson, lab, tests, harness}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";

const [pyodideDir, pyDir, boot, jobsFile] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const options = { indexURL: pyodideDir + "/", packages: [] };
if (boot === "snapshot") {
  options._loadSnapshot = new Uint8Array(gunzipSync(readFileSync(join(pyDir, "snapshot.bin.gz"))));
}
const py = await loadPyodide(options);
const { files } = JSON.parse(readFileSync(join(pyDir, "files.json"), "utf8"));
for (const name of files) {
  const path = `/book/${name}`;
  py.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
  py.FS.writeFile(path, readFileSync(join(pyDir, name), "utf8"), { encoding: "utf8" });
}
py.runPython(`
import random, sys
if "/book" not in sys.path:
    sys.path.insert(0, "/book")
import pagerun
random.seed()
`);
const pagerun = py.pyimport("pagerun");
for (const job of JSON.parse(readFileSync(jobsFile, "utf8"))) {
  if (job.kind === "cell") {
    let printed = "";
    const result = pagerun.run_cell(job.source, job.lesson, job.name, undefined, (text) => { printed += text; });
    const [output, error] = result.toJs();
    result.destroy();
    console.log(JSON.stringify({ id: job.id, output, error: error ?? null, streamed: printed }));
  } else {
    const results = JSON.parse(pagerun.run_tests(job.harness, job.lesson, job.lab, `/book/${job.tests}`));
    console.log(JSON.stringify({ id: job.id, statuses: results.map((r) => r.status) }));
  }
}
