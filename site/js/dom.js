// Small DOM helpers shared by the page's scripts.

/** The element with this id, or a new <tag id=id> put at the end of `parent` (at its start with
 * `first`): one per page, whoever asks first. */
export function ensure(id, tag, parent, { first = false } = {}) {
  let found = document.getElementById(id);
  if (!found) {
    found = document.createElement(tag);
    found.id = id;
    if (first) parent.prepend(found);
    else parent.append(found);
  }
  return found;
}

/** A <button type="button"> with its label, class and click handler. */
export function button(label, className, onClick) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = className;
  element.textContent = label;
  element.addEventListener("click", onClick);
  return element;
}

const STILL_PX = 4; // how far a pointer may drift between press and release and still be "still"

/**
 * A button whose press is never lost to the page moving: like button(), and a press that began
 * on it and was released where it went down, but over something else, counts as its click.
 * A browser fires "click" only when the press and the release hit the same element; when the
 * page moves between the two (output arriving above, an editor taking its place), a reader who
 * did not move the pointer meant this button, and the click would otherwise vanish. A pointer
 * that did move away (a reader changing their mind) still cancels, as everywhere else.
 */
export function steadyButton(label, className, onClick) {
  const element = button(label, className, onClick);
  element.addEventListener("pointerdown", (down) => {
    if (down.button !== 0) return;
    const release = (up) => {
      if (up.pointerId !== down.pointerId) return;
      removeEventListener("pointerup", release, true);
      removeEventListener("pointercancel", release, true);
      if (up.type !== "pointerup" || element.disabled || !element.isConnected) return;
      const moved = Math.hypot(up.clientX - down.clientX, up.clientY - down.clientY) > STILL_PX;
      const under = document.elementFromPoint(up.clientX, up.clientY);
      if (!moved && !element.contains(under)) onClick(up);
    };
    addEventListener("pointerup", release, true);
    addEventListener("pointercancel", release, true);
  });
  return element;
}

/** An element of `tag` with its class and its text. */
export function element(tag, className, text = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.textContent = text;
  return node;
}

/** True when the key press was meant for something the reader is typing into. */
export function typing(event) {
  const target = event.target;
  return target instanceof Element &&
    (target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true'], .cm-editor") !== null);
}
