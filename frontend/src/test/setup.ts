import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

// Testing Library only auto-cleans with vitest globals on; this keeps tests isolated without them.
afterEach(() => {
  cleanup();
  localStorage.clear();
  // The view lives in the URL (the tray's conversation, a page's search): each test starts at a blank one.
  window.history.replaceState(null, "", "/");
});
