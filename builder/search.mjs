// Index the book's search documents with MiniSearch (builder/search.py runs this).
//
//   node builder/search.mjs < {"options": {...}, "documents": [...], "terms": {...}} > index.json
//
// Writes {"options", "index", "terms"}: the page hands the first two to MiniSearch.loadJS, so the
// fields it searches and the fields it shows are the ones the build indexed with; both cut text
// into words with site/js/search-words.js. "terms" (a glossary form -> the page and section that
// introduce it) passes through for the page's ranking.
import MiniSearch from "minisearch";

import { withWords } from "../site/js/search-words.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { options, documents, terms = {} } = JSON.parse(input);
const search = new MiniSearch(withWords(options));
search.addAll(documents);
process.stdout.write(JSON.stringify({ options, index: search.toJSON(), terms }));
