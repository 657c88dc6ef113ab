import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// findBy*/waitFor wait 1 s by default; a first render under a loaded 2-core CI machine (jsdom, every
// file in parallel) has taken longer, so they wait 5 s. A passing test returns as soon as it matches.
configure({ asyncUtilTimeout: 5000 });

// Testing Library only auto-cleans with vitest globals on; this keeps tests isolated without them.
afterEach(() => {
  cleanup();
  localStorage.clear();
  // The view lives in the URL (the tray's conversation, a page's search): each test starts at a blank one.
  window.history.replaceState(null, "", "/");
});
