import { createContext, useContext } from "react";
import type { User } from "./api/types";

export interface ModelLabel {
  text: string;
  demo: boolean;
}

/** What the app shell shares with pages: the signed-in user, the chat tray's open state, the model label. */
export interface ShellState {
  user: User;
  chatOpen: boolean;
  setChatOpen: (open: boolean) => void;
  modelLabel: ModelLabel | null;
}

export const ShellContext = createContext<ShellState | null>(null);

export function useShell(): ShellState {
  const shell = useContext(ShellContext);
  if (!shell) throw new Error("useShell outside the app shell");
  return shell;
}
