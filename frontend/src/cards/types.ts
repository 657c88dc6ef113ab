import type { Decision, Payload } from "../api/types";
import type { OpenEntity } from "../chat/EntityLink";

/** What every card receives. Accept/Dismiss exist only for suggestion cards. */
export interface CardProps {
  payload: Payload;
  decision?: Decision | null;
  /** Apply the suggestion to the page and record it; absent when the page cannot apply it. */
  onAccept?: () => void | Promise<void>;
  /** Record a dismissal. */
  onDismiss?: () => void | Promise<void>;
  /** Open an NCT id or PMID in the page. */
  onEntity?: OpenEntity;
}
