// Make the memory snapshot the page's Python restores from (builder/snapshot.py runs this).
//
//   node builder/snapshot.mjs PYODIDE_DIR PY_DIR OUT_FILE
//
// Boots Pyodide from PYODIDE_DIR (the copy the site serves), writes the book's Python from
// PY_DIR (the site's py/ folder, listed in py/files.json) under /book exactly as the worker does,
// imports the book's runtime and runs one throwaway cell through it, then writes the whole heap
// to OUT_FILE. Nothing JavaScript is held by Python at that moment, so the heap serializes.
// The file system is not part of a snapshot: the worker writes the files again after restoring.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, pyDir, outFile] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const py = await loadPyodide({ indexURL: pyodideDir + "/", _makeSnapshot: true, packages: [] });
const { files } = JSON.parse(readFileSync(join(pyDir, "files.json"), "utf8"));
for (const name of files) {
  const path = `/book/${name}`;
  py.FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
  py.FS.writeFile(path, readFileSync(join(pyDir, name), "utf8"), { encoding: "utf8" });
}
py.runPython(`
import sys
sys.path.insert(0, "/book")
import pagerun
pagerun.warm()
`);
writeFileSync(outFile, py.makeMemorySnapshot());
