// questions.json (builder/questions.py): every check and prompt of the book as its page draws it,
// fetched once per page for the review. A failure rejects with what went wrong, and the next call
// tries again.
import { fetchJSON } from "./files.js";

let questions = null;

export function questionsOnce() {
  questions ??= fetchJSON("questions.json").catch((error) => {
    questions = null;
    throw error;
  });
  return questions;
}
