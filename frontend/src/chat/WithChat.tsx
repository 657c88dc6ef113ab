import type { ReactNode } from "react";
import { useShell } from "../shellContext";
import { ChatTray, type PageChatBinding } from "./ChatTray";

/** A page's layout: its content, and the chat tray beside it when open. */
export function WithChat({ binding, children }: { binding: PageChatBinding; children: ReactNode }) {
  const { chatOpen, setChatOpen, modelLabel } = useShell();
  return (
    <div className={chatOpen ? "page-with-chat chat-open" : "page-with-chat"}>
      <main className="page-main" id="main">
        {children}
      </main>
      {chatOpen && <ChatTray key={binding.app} binding={binding} modelLabel={modelLabel} onClose={() => setChatOpen(false)} />}
    </div>
  );
}
