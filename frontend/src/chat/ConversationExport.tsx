import { useRef } from "react";
import { useDismissable } from "../useDismissable";

/**
 * The open conversation as a file to hand on: Markdown, or a standalone HTML page (the question, the
 * answers, the tool steps with their result counts, the cards with their decisions, the sources linked).
 * Plain links: the browser downloads with the session cookie, and another user's id is a 404.
 */
export function ConversationExport({ id }: { id: number }) {
  const menuRef = useRef<HTMLDetailsElement>(null);
  useDismissable(menuRef);
  const base = `/api/conversations/${id}/export`;
  return (
    <details className="conversation-export" data-testid="conversation-export" ref={menuRef}>
      <summary>Export</summary>
      <div className="export-panel">
        <a href={`${base}?format=markdown`} download data-testid="export-markdown">
          Markdown (.md)
        </a>
        <a href={`${base}?format=html`} download data-testid="export-html">
          Web page (.html)
        </a>
      </div>
    </details>
  );
}
