/**
 * Each page implements exactly the client actions its page config declares (read from the registry the
 * backend serves), and an action's data reaches its handler.
 */
import { describe, expect, it, vi } from "vitest";
import { pageRegistry } from "../api/pageRegistry";
import { canRunAction, type ClientActions } from "../chat/clientActions";
import { streamEditorActions } from "./streams/streamActions";
import { tablizerActions } from "./tablizer/tablizerActions";
import { trialscoutActions } from "./trialscout/trialscoutActions";

const tablizer = () => ({
  runQuery: vi.fn(),
  openArticle: vi.fn(),
  saveSnapshot: vi.fn(),
  canSaveSnapshot: true,
  nextPage: vi.fn(),
  previousPage: vi.fn(),
});
const trialscout = () => ({ runSearch: vi.fn(), openTrial: vi.fn(), clearForm: vi.fn(), nextPage: vi.fn(), previousPage: vi.fn() });

const IMPLEMENTED: Record<string, ClientActions> = {
  tablizer: tablizerActions(tablizer()),
  trialscout: trialscoutActions(trialscout()),
  edit_research_stream: streamEditorActions({ switchTab: vi.fn(), hasStream: true }),
};

describe("client actions", () => {
  it.each(Object.entries(pageRegistry.pages))("%s implements exactly its declared client actions", (page, config) => {
    const declared = config.client_actions.map((a) => a.action).sort();
    const implemented = Object.keys(IMPLEMENTED[page] ?? {}).sort();
    expect(implemented, `${page}: declared in backend/pages, implemented in frontend/src/pages`).toEqual(declared);
  });

  it("every page that declares client actions has an implementation here", () => {
    const declaring = Object.entries(pageRegistry.pages).filter(([, c]) => c.client_actions.length).map(([p]) => p);
    expect(Object.keys(IMPLEMENTED).sort()).toEqual(declaring.sort());
  });

  it("open_trial opens the trial its data names, and needs one", () => {
    const c = trialscout();
    const actions = trialscoutActions(c);
    expect(canRunAction(actions, "open_trial", {})).toBe(false);
    expect(canRunAction(actions, "open_trial", { nct_id: "NCT01234567" })).toBe(true);
    void actions.open_trial.run({ nct_id: " NCT01234567 " });
    expect(c.openTrial).toHaveBeenCalledWith("NCT01234567");
  });

  it("run_query runs the query its data carries, or the search box as it is", () => {
    const c = tablizer();
    const actions = tablizerActions(c);
    void actions.run_query.run({ query: "EGFR[MeSH] AND resistance" });
    void actions.run_query.run({});
    expect(c.runQuery.mock.calls).toEqual([["EGFR[MeSH] AND resistance"], [null]]);
    void actions.open_article.run({ pmid: 31234567 });
    expect(c.openArticle).toHaveBeenCalledWith("31234567");
  });

  it("paging is offered only when there is a page to go to", () => {
    const actions = trialscoutActions({ ...trialscout(), nextPage: undefined, previousPage: undefined });
    expect(canRunAction(actions, "next_page", {})).toBe(false);
    expect(canRunAction(actions, "previous_page", {})).toBe(false);
    expect(canRunAction(tablizerActions(tablizer()), "next_page", {})).toBe(true);
    expect(canRunAction(actions, "toString", {})).toBe(false);
  });

  it("switch_tab switches to a tab of the editor only", () => {
    const switchTab = vi.fn();
    const actions = streamEditorActions({ switchTab, hasStream: true });
    expect(canRunAction(actions, "switch_tab", { tab: "execute" })).toBe(false);
    void actions.switch_tab.run({ tab: "retrieval" });
    expect(switchTab).toHaveBeenCalledWith("retrieval");
  });
});
