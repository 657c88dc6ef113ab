/**
 * What an empty tray offers: the page's starter prompts (its config's `starter_prompts`, served by
 * GET /api/pages), each sent as a message when clicked.
 */
import { useEffect, useState } from "react";
import { api } from "../api/client";
import type { App } from "../api/types";

/** GET /api/pages once per app load: the registry is frozen at server start. */
let registry: Promise<Record<string, { app: string; starter_prompts?: string[] }>> | null = null;

function startersFor(app: App): Promise<string[]> {
  registry ??= api.pages().then((r) => r.pages ?? {}, (err) => {
    registry = null;
    throw err;
  });
  return registry.then((pages) => Object.values(pages).find((p) => p.app === app)?.starter_prompts ?? []);
}

export function StarterPrompts({ app, onPick, disabled }: { app: App; onPick: (text: string) => void; disabled?: boolean }) {
  const [prompts, setPrompts] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    startersFor(app).then((p) => live && setPrompts(p), () => undefined);
    return () => {
      live = false;
    };
  }, [app]);
  return (
    <div className="chat-empty" data-testid="chat-empty">
      <p className="muted">Ask about what you see: build a search, add an AI column, or compare results.</p>
      {prompts.length > 0 && (
        <ul className="starter-prompts" aria-label="Starter prompts">
          {prompts.map((p) => (
            <li key={p}>
              <button type="button" className="starter-prompt" data-testid="starter-prompt" disabled={disabled} onClick={() => onPick(p)}>
                {p}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
