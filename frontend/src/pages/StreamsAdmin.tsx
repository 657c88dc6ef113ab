/** Research streams administration: a placeholder until its own issue fills it in. */
export function StreamsAdmin() {
  return (
    <main className="page-main" id="main" data-testid="streams-page">
      <h1>Research streams</h1>
      <p className="muted">
        Stream chat instructions, their history and the prompt preview will be managed here.
      </p>
    </main>
  );
}
