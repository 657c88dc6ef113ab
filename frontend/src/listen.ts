type EventMap<T> = T extends Document ? DocumentEventMap : WindowEventMap;

/**
 * Adds an event listener and returns what removes it, so an effect's cleanup cannot name a different handler
 * or capture flag than the one added: `return removeAll([listen(document, "keydown", onKey), ...])`.
 */
export function listen<T extends Document | Window, K extends keyof EventMap<T> & string>(
  target: T,
  type: K,
  handler: (event: EventMap<T>[K]) => void,
  capture = false,
): () => void {
  const listener = handler as EventListener;
  target.addEventListener(type, listener, capture);
  return () => target.removeEventListener(type, listener, capture);
}

/** An effect's cleanup that removes every listener `listen` added. */
export function removeAll(removers: (() => void)[]): () => void {
  return () => removers.forEach((remove) => remove());
}
