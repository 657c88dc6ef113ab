/** Chart colours from the page's CSS custom properties, so charts follow the theme (light or dark). */

function cssVar(name: string, fallback: string): string {
  if (typeof document === "undefined") return fallback;
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value || fallback;
}

export interface ChartTheme {
  text: string;
  muted: string;
  border: string;
  panel: string;
  palette: string[];
}

export function chartTheme(): ChartTheme {
  const accent = cssVar("--accent", "#1f5fbf");
  return {
    text: cssVar("--text", "#1d2430"),
    muted: cssVar("--muted", "#5d6776"),
    border: cssVar("--border", "#d9dde3"),
    panel: cssVar("--panel", "#ffffff"),
    // The accent first, then a colour-blind-safe series (Okabe–Ito), overridable per theme.
    palette: [accent, ...cssVar("--chart-palette", "#e69f00,#009e73,#cc79a7,#56b4e9,#d55e00,#f0e442,#0072b2,#999999")
      .split(",").map((c) => c.trim()).filter(Boolean)],
  };
}
