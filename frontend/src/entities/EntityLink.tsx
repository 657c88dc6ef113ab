import type { MouseEvent, ReactNode } from "react";

export type EntityKind = "nct" | "pmid";
export type OpenEntity = (kind: EntityKind, id: string) => void;

/** Where an entity link points when opened in a new tab (the pages read these query params). */
export function entityHref(kind: EntityKind, id: string): string {
  return kind === "nct" ? `/trialscout?nct=${encodeURIComponent(id)}` : `/tablizer?pmid=${encodeURIComponent(id)}`;
}

/** A link to a trial or article that opens it in the page (plain click) or a new tab (modified click). */
export function EntityLink({
  kind,
  id,
  onEntity,
  children,
}: {
  kind: EntityKind;
  id: string;
  onEntity?: OpenEntity;
  children?: ReactNode;
}) {
  const onClick = (e: MouseEvent) => {
    if (!onEntity || e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    onEntity(kind, id);
  };
  return (
    <a href={entityHref(kind, id)} className="entity-link" data-testid="entity-link" data-entity={`${kind}:${id}`} onClick={onClick}>
      {children ?? id}
    </a>
  );
}
