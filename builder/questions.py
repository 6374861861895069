"""questions.json: every check and prompt of the book as its page draws them, for the review page.

The review (site/templates/review.html, site/js/review.js) asks again what a reader got wrong, so
it needs each check's question, options and explanations, and each prompt's question and model
answer, in the HTML the page itself shows. The render pass keeps each one's partial context as it
draws the page (builder.html.PageContext.drawn); this module turns them into one JSON file. The
review page's HTML carries none of it: the script reads this file and shows an explanation, the
right option or a model answer only after the reader has answered.
"""
from __future__ import annotations

import json

from .course import Page

TARGET = "questions.json"


def _entry(page: Page, kind: str, context: dict) -> dict:
    anchor = f"{kind}-{context['id']}"
    entry = {"id": context["id"], "page": page.id, "name": page.named(lesson_word=True),
             "href": f"{page.path}#{anchor}", "question": str(context["question"]).strip()}
    if kind == "check":
        options = context["options"]
        entry["key"] = context["key"]
        entry["options"] = [{"text": str(o["text"]).strip(), "explain": str(o["rest"]).strip(), "key": o["key"]}
                            for o in options]
        entry["right"] = next(i for i, o in enumerate(options) if o["right"])
        entry["explain"] = [str(text).strip() for text in context["explain"]]
    else:
        entry["answer"] = [str(text).strip() for text in context["answer"]]
        entry["misses"] = [str(text).strip() for text in context["misses"]]
    return entry


def questions(drawn: list[tuple[Page, list[tuple[str, dict]]]]) -> dict:
    """{"checks": {id: entry}, "prompts": {id: entry}} from each written page (in course order)
    and what its render drew: ("check" | "prompt", the partial's context)."""
    found: dict[str, dict] = {"checks": {}, "prompts": {}}
    for page, parts in drawn:
        for kind, context in parts:
            found[kind + "s"][context["id"]] = _entry(page, kind, context)
    return found


def questions_json(drawn: list[tuple[Page, list[tuple[str, dict]]]]) -> str:
    return json.dumps(questions(drawn), ensure_ascii=False, separators=(",", ":")) + "\n"
