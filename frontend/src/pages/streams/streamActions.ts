/** The research stream editor's client actions (declared in backend/pages/edit_research_stream.py). */
import { dataText, type ClientActions } from "../../chat/clientActions";
import { EDITOR_TABS, type EditorTab } from "./streamsContext";

const tabOf = (name: string): EditorTab | null => EDITOR_TABS.find((t) => t.id === name)?.id ?? null;

export function streamEditorActions(c: { switchTab: (tab: EditorTab) => void; hasStream: boolean }): ClientActions {
  return {
    switch_tab: {
      run: (data) => {
        const tab = tabOf(dataText(data, "tab"));
        if (tab) c.switchTab(tab);
      },
      canRun: (data) => c.hasStream && tabOf(dataText(data, "tab")) !== null,
    },
  };
}
