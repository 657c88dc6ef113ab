import { CardShell } from "./CardShell";
import { asText, explanationText } from "./display";
import type { PayloadCardProps } from "./types";

/** `chat_instructions_suggestion`. Accept puts the text in the stream's instructions editor (not saved). */
export function ChatInstructionsCard(props: PayloadCardProps<"chat_instructions_suggestion">) {
  const { instructions, explanation } = props.payload.data;
  return (
    <CardShell {...props} title="Suggested chat instructions" suggestion>
      <pre className="code-block" data-testid="card-instructions">
        {asText(instructions)}
      </pre>
      {explanation ? <p className="card-explanation">{explanationText(explanation)}</p> : null}
      {!props.decision && <p className="muted small">Accept puts this text in the instructions editor; you still save it.</p>}
    </CardShell>
  );
}
