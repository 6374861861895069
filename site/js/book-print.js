// print.html's entry point: the whole book as one worksheet to print. No Python, no editors, no
// saved answers: each page as it was built, its answers after it (print.js), and the service
// worker, so the page is there offline too.
import * as theme from "./theme.js";
import * as print from "./print.js";
import * as offline from "./offline.js";

theme.init();
print.worksheet();
const button = document.querySelector(".book-print-button");
if (button) {
  button.hidden = false;
  button.addEventListener("click", () => window.print());
}
offline.init();
