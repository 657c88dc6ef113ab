import { useState, type FormEvent } from "react";
import { api } from "../api/client";
import type { User } from "../api/types";

export function LoginPage({ onLogin }: { onLogin: (user: User) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onLogin(await api.login(username, password));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login-page" id="main">
      <form className="login-form" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Colleague</h1>
        <p className="muted">Sign in to Tablizer and TrialScout.</p>
        <label htmlFor="login-username">Username</label>
        <input
          id="login-username"
          data-testid="login-username"
          autoComplete="username"
          autoFocus
          required
          value={username}
          onChange={(e) => setUsername(e.target.value)}
        />
        <label htmlFor="login-password">Password</label>
        <input
          id="login-password"
          data-testid="login-password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {error && (
          <p className="error-text" role="alert" data-testid="login-error">
            {error}
          </p>
        )}
        <button type="submit" className="primary" data-testid="login-submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
