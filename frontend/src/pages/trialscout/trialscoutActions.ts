/** TrialScout's client actions (declared in backend/pages/trialscout.py). */
import { dataText, needs, type ClientActions } from "../../chat/clientActions";

export interface TrialScoutControls {
  runSearch: () => unknown;
  openTrial: (nctId: string) => void | Promise<void>;
  clearForm: () => void;
  /** Absent when there is no such page. */
  nextPage?: () => void;
  previousPage?: () => void;
}

export function trialscoutActions(c: TrialScoutControls): ClientActions {
  return {
    run_search: { run: () => c.runSearch() },
    open_trial: { run: (data) => c.openTrial(dataText(data, "nct_id")), canRun: needs("nct_id") },
    clear_form: { run: c.clearForm },
    next_page: { run: () => c.nextPage?.(), canRun: () => Boolean(c.nextPage) },
    previous_page: { run: () => c.previousPage?.(), canRun: () => Boolean(c.previousPage) },
  };
}
