import { useEffect, type RefObject } from "react";

/**
 * A `<details>` used as a menu closes like one: on a click outside it or on Escape (focus returns to its
 * summary), so an open menu never sits over the table it belongs to.
 */
export function useDismissable(ref: RefObject<HTMLDetailsElement | null>): void {
  useEffect(() => {
    const outside = (event: PointerEvent) => {
      const menu = ref.current;
      if (menu?.open && event.target instanceof Node && !menu.contains(event.target)) menu.open = false;
    };
    const escape = (event: KeyboardEvent) => {
      const menu = ref.current;
      if (event.key !== "Escape" || !menu?.open || !menu.contains(document.activeElement)) return;
      event.stopPropagation();
      menu.open = false;
      menu.querySelector("summary")?.focus();
    };
    document.addEventListener("pointerdown", outside);
    document.addEventListener("keydown", escape, true);
    return () => {
      document.removeEventListener("pointerdown", outside);
      document.removeEventListener("keydown", escape, true);
    };
  }, [ref]);
}
