/** The whole app, opened at a URL, for tests that drive it through its pages and chat tray. */
import { act, fireEvent, render, screen } from "@testing-library/react";
import { App } from "../App";

/** Renders the app at `path` and waits until the element `ready` (a test id) shows. */
export async function openApp(path: string, ready = "current-user") {
  window.history.replaceState(null, "", path);
  render(<App />);
  await screen.findByTestId(ready);
  // The render that showed `ready` came from a fetch, outside act: its effects (a page applying its URL on
  // mount) may still be pending, and would land after a test's first keystroke. Let them run first.
  await act(async () => {});
}

/** Opens the chat tray and sends `text` with Enter. */
export async function ask(text: string) {
  fireEvent.click(screen.getByTestId("chat-toggle"));
  const input = await screen.findByTestId("chat-input");
  fireEvent.change(input, { target: { value: text } });
  fireEvent.keyDown(input, { key: "Enter" });
}
