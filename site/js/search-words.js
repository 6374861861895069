// How the book's search cuts text into words. The build indexes with indexWords
// (builder/search.mjs) and the page searches with queryWords (search.js): one module, so the
// index and the queries always agree.
//
// A word is a run of letters, digits and underscores, so an identifier stays whole: a search for
// "is_error" looks for is_error, not for every "is". The index also keeps an identifier's parts,
// so "error" still finds the places that say is_error.
const WORD = /[\p{L}\p{N}_]+/gu;

/** The words of a query, identifiers whole. */
export function queryWords(text) {
  return String(text).match(WORD) ?? [];
}

/** The words of a document: each word, and the parts of an identifier after it. */
export function indexWords(text) {
  const words = [];
  for (const word of queryWords(text)) {
    words.push(word);
    if (!word.includes("_")) continue;
    for (const part of word.split("_")) if (part) words.push(part);
  }
  return words;
}

/** MiniSearch's options with the book's words: what both the build and the page pass it. */
export function withWords(options) {
  return { ...options, tokenize: indexWords, searchOptions: { ...options.searchOptions, tokenize: queryWords } };
}
