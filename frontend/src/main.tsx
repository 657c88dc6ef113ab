import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import "./styles.css";
import { applyTheme, resolveTheme } from "./theme";

applyTheme(resolveTheme()); // before the first paint: no flash of the light theme on a dark system

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
