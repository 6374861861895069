// Where the book's files are, and how a script reads one: one place for the page's scripts and
// the Python worker. A file that cannot be read is an error naming it (never an empty answer),
// so a caller can say what went wrong.
export const SITE = new URL("../../", import.meta.url);
// The book's Python files (harness_py, the stage props, each lab's tests.py) are served under py/.
export const PY = "py/";

/** `name` under py/, whether or not it already starts with it. */
export function pyPath(name) {
  return name.startsWith(PY) ? name : PY + name;
}

export async function fetchText(path) {
  const response = await fetch(new URL(path, SITE));
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.text();
}

export async function fetchJSON(path) {
  const text = await fetchText(path);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${path}: not JSON (${error.message})`);
  }
}
