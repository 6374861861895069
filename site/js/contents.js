// A lesson's contents rail: its sections, checks and labs, where the reader is (aria-current)
// and what is done (a check answered right, a lab passed). Sticky beside the text on wide
// screens, folded at the top of the lesson on narrower ones. Every h2 gets a visible permalink.
const WIDE = matchMedia("(min-width: 80rem)");

function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "section";
}

function permalink(heading) {
  if (!heading.id) {
    let id = slug(heading.textContent);
    while (document.getElementById(id)) id += "-";
    heading.id = id;
  }
  if (heading.querySelector(".permalink")) return;
  const link = document.createElement("a");
  link.className = "permalink";
  link.href = `#${heading.id}`;
  link.textContent = "#";
  link.setAttribute("aria-label", `Link to “${heading.textContent.trim()}”`);
  heading.append(" ", link);
}

function entry(target, label, kind) {
  const item = document.createElement("li");
  item.className = `contents-${kind}`;
  const link = document.createElement("a");
  link.href = `#${target.id}`;
  link.textContent = label;
  item.append(link);
  item.target = target;
  return item;
}

function isDone(target) {
  if (target.matches("section.check")) return target.dataset.state === "right";
  if (target.matches("section.lab")) return target.dataset.passed === "true";
  return false;
}

export function init() {
  const lesson = document.querySelector("article.lesson[data-kind]");
  if (!lesson || lesson.dataset.kind === "missing") return;
  const headings = [...lesson.querySelectorAll("h2")];
  headings.forEach(permalink);
  const parts = [...lesson.querySelectorAll("h2:not(.lab-title), section.check, section.lab")];
  if (parts.filter((part) => part.matches("h2")).length < 2) return;

  const nav = document.createElement("nav");
  nav.className = "contents";
  nav.setAttribute("aria-label", "Contents of this page");
  const fold = document.createElement("details");
  fold.className = "contents-fold";
  const summary = document.createElement("summary");
  summary.textContent = "Contents";
  const list = document.createElement("ol");
  list.className = "contents-list";
  let sub = null;
  const items = [];
  let checks = 0;
  for (const part of parts) {
    let item;
    if (part.matches("h2")) {
      const label = part.cloneNode(true);
      label.querySelector(".permalink")?.remove();
      item = entry(part, label.textContent.trim(), "section");
      list.append(item);
      sub = document.createElement("ol");
      item.append(sub);
    } else {
      const label = part.matches(".check")
        ? `Check ${++checks}`
        : part.querySelector(".lab-title").textContent.replace("#", "").trim();
      item = entry(part, label, part.matches(".check") ? "check" : "lab");
      (sub || list).append(item);
    }
    items.push(item);
  }
  list.querySelectorAll("ol:empty").forEach((empty) => empty.remove());
  fold.append(summary, list);
  nav.append(fold);
  lesson.querySelector(".lesson-header").after(nav);
  document.body.classList.add("has-contents");

  const placed = () => { fold.open = WIDE.matches; };
  placed();
  WIDE.addEventListener("change", placed);
  // On a narrow screen a chosen entry folds the contents away again.
  list.addEventListener("click", (event) => { if (event.target.closest("a") && !WIDE.matches) fold.open = false; });

  const marks = () => {
    for (const item of items) item.classList.toggle("is-done", isDone(item.target));
  };
  marks();
  new MutationObserver(marks).observe(lesson, { subtree: true, attributes: true, attributeFilter: ["data-state", "data-passed"] });

  // Where the reader is: the last entry whose target starts above a third of the window.
  let pending = false;
  const here = () => {
    pending = false;
    const line = innerHeight / 3;
    let current = null;
    for (const item of items) {
      if (item.target.getBoundingClientRect().top <= line) current = item;
      else break;
    }
    for (const item of items) {
      const link = item.querySelector(":scope > a");
      if (item === current) link.setAttribute("aria-current", "location");
      else link.removeAttribute("aria-current");
    }
  };
  addEventListener("scroll", () => { if (!pending) { pending = true; requestAnimationFrame(here); } }, { passive: true });
  here();
}
