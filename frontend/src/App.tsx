/** The app shell: who is signed in, which page is shown, the header and the chat toggle. */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { api, setUnauthorizedHandler } from "./api/client";
import type { Health, User } from "./api/types";
import { LoginPage } from "./pages/LoginPage";
import { StreamsAdmin } from "./pages/StreamsAdmin";
import { UsageAdmin } from "./pages/usage/UsageAdmin";
import { TablizerPage } from "./pages/tablizer/TablizerPage";
import { TrialScoutPage } from "./pages/trialscout/TrialScoutPage";
import { HeaderMenu } from "./HeaderMenu";
import { chatFromUrl, encodeChat, patchUrl } from "./state/urlState";
import { Link, navigate, useLocation } from "./router";
import { ShellContext, type ModelLabel, type ShellState } from "./shellContext";
import { useTheme } from "./theme";

/** Tolerant reading of /api/health: "demo model" when the demo model answers. */
export function modelLabelOf(health: { llm?: Partial<Health["llm"]> } | null): ModelLabel | null {
  const llm = health?.llm;
  if (!llm || typeof llm !== "object") return null;
  const mode = String(llm.mode ?? "").toLowerCase();
  if (mode === "demo") return { text: "demo model", demo: true };
  const name = llm.label || llm.model;
  return name ? { text: String(name), demo: false } : null;
}

function safeNext(next: string | null): string {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/login") ? next : "/tablizer";
}

/** Switches light/dark; says what it switches to, and remembers it (theme.ts). */
function ThemeToggle({ theme, onToggle }: { theme: "light" | "dark"; onToggle: () => void }) {
  return (
    <button type="button" aria-pressed={theme === "dark"} data-testid="theme-toggle" onClick={onToggle}>
      Dark theme
    </button>
  );
}

export function App() {
  const { path, params } = useLocation();
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [health, setHealth] = useState<Health | null>(null);
  // The tray's open state lives in the URL (`chat=1`): a reload, Back/Forward and a pasted link keep it.
  const chatOpen = chatFromUrl(params).open;
  const toggleRef = useRef<HTMLButtonElement>(null);
  const { theme, toggle: toggleTheme } = useTheme();
  /** Set by the login form: once the page is there, focus goes to its first field, not the body. */
  const focusFirstField = useRef(false);

  useEffect(() => {
    api.session().then(setUser, () => setUser(null));
    api.health().then(setHealth, () => setHealth(null));
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setUser(null);
      const here = window.location.pathname + window.location.search;
      if (!here.startsWith("/login")) navigate(`/login?next=${encodeURIComponent(here)}`);
    });
    return () => setUnauthorizedHandler(null);
  }, []);

  const setChatOpen = useCallback((open: boolean) => {
    patchUrl(encodeChat(open, open ? chatFromUrl(new URLSearchParams(window.location.search)).conversation : null));
    // Closing returns focus to the button that opens the tray.
    if (!open) requestAnimationFrame(() => toggleRef.current?.focus());
  }, []);

  const shell = useMemo<ShellState | null>(
    () => (user ? { user, chatOpen, setChatOpen, modelLabel: modelLabelOf(health) } : null),
    [user, chatOpen, setChatOpen, health],
  );

  useEffect(() => {
    if (!user || path === "/login" || !focusFirstField.current) return;
    let frame = 0;
    let tries = 0;
    const attempt = () => {
      const field = document.querySelector<HTMLElement>(
        "#main input:not([type=hidden]):not(:disabled), #main select:not(:disabled), #main textarea:not(:disabled)",
      );
      if (field) {
        focusFirstField.current = false;
        field.focus();
      } else if (++tries < 60) frame = requestAnimationFrame(attempt); // the page may still be loading
    };
    frame = requestAnimationFrame(attempt);
    return () => cancelAnimationFrame(frame);
  }, [user, path]);

  // Redirects happen in an effect, never during render.
  useEffect(() => {
    if (user === undefined) return;
    if (!user && path !== "/login") navigate(`/login?next=${encodeURIComponent(path + (params.size ? `?${params}` : ""))}`, { replace: true });
    else if (user && path === "/login") navigate(safeNext(params.get("next")), { replace: true });
    else if (user && path === "/") navigate("/tablizer", { replace: true });
  }, [user, path, params]);

  if (user === undefined) return <p className="loading">Loading…</p>;
  if (!user || !shell) {
    return path === "/login" ? <LoginPage
        onLogin={(u) => {
          focusFirstField.current = true;
          setUser(u);
        }}
      /> : <p className="loading">Redirecting…</p>;
  }

  const isAdmin = user.role === "admin";
  let page;
  if (path === "/tablizer") page = <TablizerPage />;
  else if (path === "/trialscout") page = <TrialScoutPage />;
  else if (path === "/streams" && isAdmin) page = <StreamsAdmin />;
  else if (path === "/usage" && isAdmin) page = <UsageAdmin />;
  else if (path === "/" || path === "/login") page = <p className="loading">Loading…</p>;
  else
    page = (
      <main className="page-main" id="main">
        <h1>Not found</h1>
        <p>
          <Link to="/tablizer">Go to Tablizer</Link>
        </p>
      </main>
    );
  const hasChat = path === "/tablizer" || path === "/trialscout" || (path === "/streams" && isAdmin);

  const logout = async () => {
    await api.logout().catch(() => undefined);
    setUser(null);
    navigate("/login", { replace: true });
  };

  const navItem = (to: string, label: string) => (
    <Link to={chatOpen ? `${to}?chat=1` : to} className={path === to ? "nav-link active" : "nav-link"} aria-current={path === to ? "page" : undefined} data-testid={`nav-${label.toLowerCase()}`}>
      {label}
    </Link>
  );

  return (
    <ShellContext.Provider value={shell}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="app-header">
        <span className="brand">Colleague</span>
        {hasChat && (
          <button
            ref={toggleRef}
            type="button"
            className={chatOpen ? "chat-toggle active" : "chat-toggle"}
            aria-expanded={chatOpen}
            data-testid="chat-toggle"
            onClick={() => setChatOpen(!chatOpen)}
          >
            Ask Colleague
          </button>
        )}
        <HeaderMenu closeKey={path}>
          <nav aria-label="Apps">
            {navItem("/tablizer", "Tablizer")}
            {navItem("/trialscout", "TrialScout")}
            {isAdmin && navItem("/streams", "Streams")}
            {isAdmin && navItem("/usage", "Usage")}
          </nav>
          <div className="header-right">
            <span className="muted" data-testid="current-user">
              {user.username}
              {isAdmin ? " (admin)" : ""}
            </span>
            <ThemeToggle theme={theme} onToggle={toggleTheme} />
            <button type="button" data-testid="logout" onClick={logout}>
              Sign out
            </button>
          </div>
        </HeaderMenu>
      </header>
      {page}
    </ShellContext.Provider>
  );
}
