/**
 * Below 768 px (styles.css) the chat tray and the detail panel are full-screen sheets: there they behave as
 * modal dialogs (aria-modal, focus kept inside, the one on top owning Tab), and beside the page (wider
 * screens) they stay non-modal panels.
 */
import { useEffect, useRef, useSyncExternalStore, type RefObject } from "react";

export const PHONE_QUERY = "(max-width: 767px)";

function phoneMedia(): MediaQueryList | null {
  return typeof window !== "undefined" && typeof window.matchMedia === "function" ? window.matchMedia(PHONE_QUERY) : null;
}

function subscribe(onChange: () => void): () => void {
  const media = phoneMedia();
  media?.addEventListener("change", onChange);
  return () => media?.removeEventListener("change", onChange);
}

/** Whether the screen is narrow enough for the sheets (styles.css's phone layout). */
export function useIsPhone(): boolean {
  return useSyncExternalStore(subscribe, () => phoneMedia()?.matches ?? false, () => false);
}

const FOCUSABLE =
  'a[href], button:not([disabled]), textarea:not([disabled]), input:not([disabled]):not([type="hidden"]), ' +
  'select:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/** What Tab can reach inside `root`, in order: rendered elements (a closed menu's items have no boxes). */
function focusables(root: HTMLElement): HTMLElement[] {
  const all = [...root.querySelectorAll<HTMLElement>(FOCUSABLE)];
  const shown = all.filter((el) => el.getClientRects().length > 0);
  return shown.length > 0 ? shown : all; // no layout at all (jsdom): every candidate counts
}

/** The open modal sheets, the newest (on top) last: only it keeps focus, so two sheets never fight. */
const open: HTMLElement[] = [];

/**
 * While `active`, Tab and Shift+Tab cycle inside `ref`'s element, and focus that lands outside it (a click
 * on what the sheet covers, a script) comes back to it.
 */
export function useFocusTrap(ref: RefObject<HTMLElement | null>, active: boolean): void {
  useEffect(() => {
    const root = ref.current;
    if (!active || !root) return;
    open.push(root);
    const onTop = () => open[open.length - 1] === root;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Tab" || !onTop()) return;
      const items = focusables(root);
      const current = document.activeElement;
      if (items.length === 0) {
        e.preventDefault();
        root.focus();
        return;
      }
      const first = items[0];
      const last = items[items.length - 1];
      const inside = current instanceof Node && root.contains(current);
      if (e.shiftKey && (!inside || current === first || current === root)) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && (!inside || current === last)) {
        e.preventDefault();
        first.focus();
      }
    };
    const onFocusIn = (e: FocusEvent) => {
      if (onTop() && e.target instanceof Node && !root.contains(e.target)) root.focus();
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("focusin", onFocusIn);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("focusin", onFocusIn);
      open.splice(open.indexOf(root), 1);
    };
  }, [ref, active]);
}

/** On unmount, focus goes back to what had it when the component mounted (the button that opened it), if
 * focus was left inside the closed component (or nowhere) and that element is still on the page. */
export function useReturnFocus(ref: RefObject<HTMLElement | null>): void {
  const opener = useRef<Element | null>(typeof document !== "undefined" ? document.activeElement : null);
  useEffect(() => {
    const root = ref.current;
    const from = opener.current;
    return () => {
      const now = document.activeElement;
      const lost = now === null || now === document.body || (root !== null && root.contains(now));
      if (lost && from instanceof HTMLElement && from.isConnected && from !== document.body) {
        requestAnimationFrame(() => {
          if (from.isConnected) from.focus();
        });
      }
    };
  }, [ref]);
}
