/**
 * The header's navigation and account items. Wide screens show them inline; below 768 px (styles.css) they
 * fold behind a Menu button, so nothing leaves a phone's screen. One set of elements serves both layouts.
 */
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { listen, removeAll } from "./listen";

export function HeaderMenu({ children, closeKey }: { children: ReactNode; /** Closes the menu when it changes (the page). */ closeKey: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const buttonRef = useRef<HTMLButtonElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);

  useEffect(() => setOpen(false), [closeKey]);

  useEffect(() => {
    if (!open) return;
    const outside = (e: PointerEvent) => {
      const target = e.target as Node;
      if (!panelRef.current?.contains(target) && !buttonRef.current?.contains(target)) setOpen(false);
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      buttonRef.current?.focus();
    };
    return removeAll([listen(document, "pointerdown", outside), listen(document, "keydown", escape)]);
  }, [open]);

  return (
    <>
      <button
        ref={buttonRef}
        type="button"
        className="header-menu-button"
        aria-expanded={open}
        aria-controls={id}
        data-testid="header-menu"
        onClick={() => setOpen((v) => !v)}
      >
        Menu
      </button>
      <div
        ref={panelRef}
        id={id}
        className={open ? "header-items open" : "header-items"}
      >
        {children}
      </div>
    </>
  );
}
