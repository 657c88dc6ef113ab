import type { ReactNode } from "react";
import { useShell } from "../shellContext";
import { ChatTray, type PageChatBinding } from "./ChatTray";

/** A page's layout: its content, and the chat tray beside it when open. */
/** `trayKey` (default: the app) starts a fresh tray when it changes, e.g. entering a sandbox chat. */
export function WithChat({ binding, children, trayKey }: { binding: PageChatBinding; children: ReactNode; trayKey?: string }) {
  const { chatOpen, setChatOpen, modelLabel } = useShell();
  return (
    <div className={chatOpen ? "page-with-chat chat-open" : "page-with-chat"}>
      <main className="page-main" id="main">
        {children}
      </main>
      {chatOpen && <ChatTray key={trayKey ?? binding.app} binding={binding} modelLabel={modelLabel} onClose={() => setChatOpen(false)} />}
    </div>
  );
}
