/** A `chart` the model proposed, drawn inline from the statistics route over the page's search; Accept pins it. */
import { useMemo } from "react";
import { ChartView } from "../charts/ChartView";
import { chartFromPayload, type ChartSpec } from "../charts/chartSpec";
import { useStatsScope } from "../charts/statsScope";
import { CardShell } from "./CardShell";
import type { PayloadCardProps } from "./types";

export function ChartCard(props: PayloadCardProps<"chart">) {
  const scope = useStatsScope();
  const { data } = props.payload;
  const spec = useMemo<ChartSpec | Error>(() => {
    if (!scope) return new Error("Charts are drawn on TrialScout and Tablizer.");
    try {
      return chartFromPayload(scope.app, data);
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }, [scope, data]);
  const title = typeof data.title === "string" && data.title ? data.title : "Chart";
  return (
    <CardShell {...props} title={title} suggestion onAccept={spec instanceof Error ? undefined : props.onAccept}>
      {spec instanceof Error ? <p className="muted">{spec.message}</p> : <ChartView scope={scope} spec={spec} compact />}
    </CardShell>
  );
}
