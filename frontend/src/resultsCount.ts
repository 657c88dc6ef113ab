import { createContext } from "react";

/** How many rows the page's results show, for the tray's "View N results" on a phone (where it covers them). */
export const ResultsCountContext = createContext<number | null>(null);
