// The page's entry point: one import and one init per module, nothing else.
import * as theme from "./theme.js";
import * as python from "./python.js";
import * as storage from "./storage.js";
import * as checks from "./checks.js";
import * as cells from "./cells.js";
import * as labs from "./labs.js";
import * as solution from "./solution.js";
import * as labside from "./labside.js";
import * as answers from "./answers.js";
import * as progress from "./progress.js";
import * as capabilities from "./capabilities.js";
import * as offline from "./offline.js";
import * as copy from "./copy.js";
import * as print from "./print.js";
import * as contents from "./contents.js";
import * as search from "./search.js";
import * as pagekeys from "./pagekeys.js";
import * as figures from "./figures.js";
import * as review from "./review.js";
import * as reviewDue from "./review-due.js";
import * as harnessMap from "./harness-map.js";
import * as glossary from "./glossary.js";
import * as timeline from "./timeline.js";

theme.init(); // the header's theme toggle (the theme itself is set before the first paint)
search.init(); // the header's search box, and "/" to reach it
pagekeys.init(); // ← and → for the previous and the next page
figures.init(); // a figure tapped opens large, to pan and zoom
glossary.init(); // a term's card: a tap opens it on a touch screen, Escape closes it
// Then: Pyodide boots while the rest of the page is set up; a page with no code (the course
// map) starts no Python at all.
if (document.querySelector(".cell, .lab")) python.init();
await storage.init(); // the saved work, read before the parts that restore it
checks.init();
cells.init();
labs.init();
solution.init(); // after labs, before answers: it hears the restored hints
labside.init(); // "Spec beside the code", in each lab's tools
copy.init(); // after cells and labs: the Copy buttons join their bars
timeline.init(); // after cells: a printed lab.timeline becomes a stepper
print.init();
contents.init(); // the contents rail and the headings' permalinks
answers.init(); // after checks.init(): it restores answers by replaying them
progress.init();
capabilities.init(); // "What your harness can do": ticked from the labs passed
harnessMap.init(); // the course map's "Your harness so far"
reviewDue.init(); // the course map's "4 questions to review"
review.init(); // review.html: what the reader got wrong, asked again
offline.init(); // the service worker: the whole book saved for offline study
