import { CardShell } from "./CardShell";
import { TrialDetailView } from "./TrialDetailView";
import type { CardProps } from "./types";

/** `trial_details` (tool payload from get_trial). Informational: no Accept/Dismiss. */
export function TrialDetailsCard(props: CardProps) {
  return (
    <CardShell {...props} title="Trial details">
      <TrialDetailView data={props.payload.data} compact onEntity={props.onEntity} />
    </CardShell>
  );
}
