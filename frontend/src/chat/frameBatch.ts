/**
 * Collects items and hands them over together at the next animation frame (a timer where there are no
 * frames), so a burst of stream events costs one render instead of one each.
 */
export interface FrameBatcher<T> {
  push(item: T): void;
  /** Hand over what is waiting now (before an action that must come after it). */
  flush(): void;
  /** Drop what is waiting and the scheduled frame (unmount). */
  cancel(): void;
}

export function frameBatcher<T>(deliver: (items: T[]) => void): FrameBatcher<T> {
  let waiting: T[] = [];
  let cancelFrame: (() => void) | null = null;

  const schedule = (run: () => void): (() => void) => {
    if (typeof requestAnimationFrame === "function") {
      const id = requestAnimationFrame(run);
      return () => cancelAnimationFrame(id);
    }
    const id = setTimeout(run, 16);
    return () => clearTimeout(id);
  };

  const flush = () => {
    cancelFrame?.();
    cancelFrame = null;
    if (waiting.length === 0) return;
    const items = waiting;
    waiting = [];
    deliver(items);
  };

  return {
    push(item) {
      waiting.push(item);
      if (!cancelFrame) cancelFrame = schedule(flush);
    },
    flush,
    cancel() {
      cancelFrame?.();
      cancelFrame = null;
      waiting = [];
    },
  };
}
