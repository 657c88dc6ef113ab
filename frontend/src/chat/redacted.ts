/**
 * Stored conversations changed on the server behind the tray's back (deleting a patient redacts the turns
 * sent while it was loaded): an open tray shows its conversation again as stored, so the page stops
 * showing what the server has forgotten.
 */
const REDACTED = "colleague:conversations-redacted";

export function announceRedacted(): void {
  window.dispatchEvent(new Event(REDACTED));
}

export function onRedacted(listener: () => void): () => void {
  window.addEventListener(REDACTED, listener);
  return () => window.removeEventListener(REDACTED, listener);
}
