import { useEffect, type RefObject } from "react";
import { listen, removeAll } from "./listen";

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
    return removeAll([listen(document, "pointerdown", outside), listen(document, "keydown", escape, true)]);
  }, [ref]);
}
