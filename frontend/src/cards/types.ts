import type { Decision, Payload, PayloadData, PayloadTypeName } from "../api/types";
import type { OpenEntity } from "../entities/EntityLink";

/** A variant of Accept a card may offer: `filter` also filters the table by the accepted AI column's verdict. */
export interface AcceptOptions {
  filter?: "yes";
}

/** What every card receives. Accept/Dismiss exist only for suggestion cards. */
export interface CardProps<D extends object = Record<string, unknown>> {
  payload: Omit<Payload, "data"> & { data: D };
  decision?: Decision | null;
  /** Apply the suggestion to the page and record it; absent when the page cannot apply it. */
  onAccept?: (options?: AcceptOptions) => void | Promise<void>;
  /** Record a dismissal. */
  onDismiss?: () => void | Promise<void>;
  /** Open an NCT id or PMID in the page. */
  onEntity?: OpenEntity;
}

/** The card of payload type `K`: its data has the fields of the type's model, any of them possibly missing
 * (the server validated it, but a card never throws on an odd row). */
export type PayloadCardProps<K extends PayloadTypeName> = CardProps<Partial<PayloadData<K>>>;
