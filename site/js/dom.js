// Small DOM helpers shared by the page's scripts.

/** A <button type="button"> with its label, class and click handler. */
export function button(label, className, onClick) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = className;
  element.textContent = label;
  element.addEventListener("click", onClick);
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
