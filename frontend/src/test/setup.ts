import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

// Testing Library only auto-cleans with vitest globals on; this keeps tests isolated without them.
afterEach(() => {
  cleanup();
  localStorage.clear();
});
