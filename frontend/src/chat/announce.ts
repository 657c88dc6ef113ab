/**
 * What a screen reader hears of an answer: one polite announcement when it finishes, never each chunk
 * (a live log re-reads as text streams in). Only answers seen streaming here are announced, not history
 * that was opened.
 */
import { useEffect, useRef, useState } from "react";
import type { ChatMessage } from "./chatMessage";

const MAX_CHARS = 600;

/** Markdown as it would be read: no markup characters, one line, clipped. */
export function spokenText(markdown: string): string {
  const plain = markdown
    .replace(/```[\s\S]*?```/g, " (code) ")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[#>*_`|~]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > MAX_CHARS ? `${plain.slice(0, MAX_CHARS).trimEnd()}…` : plain;
}

export function announcementFor(message: ChatMessage): string {
  const text = spokenText(message.content);
  const cards = message.payloads.length ? ` ${message.payloads.length === 1 ? "1 card" : `${message.payloads.length} cards`} to review.` : "";
  if (message.status === "failed") return `Colleague's answer failed. ${text}`.trim();
  if (message.status === "interrupted") return `Colleague's answer stopped. ${text}`.trim() + cards;
  return `Colleague answered: ${text || "(no text)"}.${cards}`;
}

/** The text for the tray's polite live region: set once per answer, when the answer stops streaming. */
export function useAnswerAnnouncement(messages: ChatMessage[]): string {
  const [text, setText] = useState("");
  const streamed = useRef(new Set<string>());
  const announced = useRef(new Set<string>());
  useEffect(() => {
    for (const m of messages) {
      if (m.role !== "assistant") continue;
      if (m.status === "streaming") streamed.current.add(m.key);
      else if (streamed.current.has(m.key) && !announced.current.has(m.key)) {
        announced.current.add(m.key);
        setText(announcementFor(m));
      }
    }
  }, [messages]);
  return text;
}
