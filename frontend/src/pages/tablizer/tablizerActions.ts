/** Tablizer's client actions (declared in backend/pages/tablizer.py). */
import { dataText, needs, type ClientActions } from "../../chat/clientActions";

export interface TablizerControls {
  /** Put `query` in the search box and run it; with no query, run the search box as it is. */
  runQuery: (query: string | null) => unknown;
  openArticle: (pmid: string) => void | Promise<void>;
  saveSnapshot: () => void;
  canSaveSnapshot: boolean;
  /** Absent when there is no such page. */
  nextPage?: () => void;
  previousPage?: () => void;
}

export function tablizerActions(c: TablizerControls): ClientActions {
  return {
    run_query: { run: (data) => c.runQuery(dataText(data, "query") || null) },
    open_article: { run: (data) => c.openArticle(dataText(data, "pmid")), canRun: needs("pmid") },
    save_snapshot: { run: c.saveSnapshot, canRun: () => c.canSaveSnapshot },
    next_page: { run: () => c.nextPage?.(), canRun: () => Boolean(c.nextPage) },
    previous_page: { run: () => c.previousPage?.(), canRun: () => Boolean(c.previousPage) },
  };
}
