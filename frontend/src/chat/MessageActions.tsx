/**
 * What you can do with a message: copy an answer as Markdown, regenerate the last answer, edit and resend the
 * last question, go back to an earlier version of a regenerated or edited one; and the copy button of a code
 * block.
 */
import { useEffect, useRef, useState } from "react";

/** Copy text to the clipboard; false when the browser refuses (no permission, an insecure page). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A button that copies `text` and says "Copied" for a moment (or "Copy failed"). */
export function CopyButton({ text, label = "Copy", testId, className }: { text: () => string; label?: string; testId: string; className?: string }) {
  const [done, setDone] = useState<null | boolean>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  return (
    <button
      type="button"
      className={className ?? "link-button small"}
      data-testid={testId}
      onClick={async () => {
        setDone(await copyText(text()));
        if (timer.current) clearTimeout(timer.current);
        timer.current = setTimeout(() => setDone(null), 1500);
      }}
    >
      {done === null ? label : done ? "Copied" : "Copy failed"}
    </button>
  );
}

export interface MessageActionHandlers {
  /** Regenerate the last answer (absent: not the last answer, or a turn is running). */
  onRegenerate?: () => void;
  /** Put the last question back in the box to edit and resend it. */
  onEdit?: () => void;
}

export function AssistantActions({ markdown, onRegenerate }: { markdown: string } & MessageActionHandlers) {
  return (
    <div className="message-actions" role="group" aria-label="Answer actions">
      {markdown && <CopyButton text={() => markdown} label="Copy" testId="message-copy" />}
      {onRegenerate && (
        <button type="button" className="link-button small" data-testid="message-regenerate" onClick={onRegenerate}>
          Regenerate
        </button>
      )}
    </div>
  );
}

export function UserActions({ onEdit }: MessageActionHandlers) {
  if (!onEdit) return null;
  return (
    <div className="message-actions" role="group" aria-label="Question actions">
      <button type="button" className="link-button small" data-testid="message-edit" title="Edit and resend (↑ in an empty box)" onClick={onEdit}>
        Edit
      </button>
    </div>
  );
}

export interface VersionControl {
  /** The version shown (1-based) and how many there are. */
  current: number;
  count: number;
  /** Show another version (absent while a turn runs). */
  onSwitch?: (version: number) => void;
}

/** "‹ 2 / 3 ›" on a message where regenerate or edit left earlier versions of what follows. */
export function VersionSwitcher({ current, count, onSwitch }: VersionControl) {
  return (
    <div className="version-switcher" role="group" aria-label="Versions" data-testid="version-switcher">
      <button
        type="button"
        className="link-button small"
        aria-label="Previous version"
        data-testid="version-previous"
        disabled={!onSwitch || current <= 1}
        onClick={() => onSwitch?.(current - 1)}
      >
        ‹
      </button>
      <span data-testid="version-position">
        {current} / {count}
      </span>
      <button
        type="button"
        className="link-button small"
        aria-label="Next version"
        data-testid="version-next"
        disabled={!onSwitch || current >= count}
        onClick={() => onSwitch?.(current + 1)}
      >
        ›
      </button>
    </div>
  );
}
