// The page's entry point: one import and one init per module, nothing else.
import * as checks from "./checks.js";

checks.init();
