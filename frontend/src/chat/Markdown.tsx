/**
 * Safe markdown for assistant answers: no raw HTML, only http/https/mailto
 * links, images shown as inert text naming their domain (never loaded, never
 * linked), and NCT ids / PMIDs turned into links that open the row or detail
 * view in the page.
 */
import { useMemo, useRef } from "react";
import ReactMarkdown, { type Components, type UrlTransform } from "react-markdown";
import remarkGfm from "remark-gfm";
import { EntityLink, entityHref, type EntityKind, type OpenEntity } from "../entities/EntityLink";
import { CopyButton } from "./MessageActions";

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
  data?: { hProperties?: Record<string, string> };
}

const ENTITY = /\b(NCT\d{8})\b|\bPMID:?\s?(\d{1,9})\b/g;
const SAFE_PROTOCOL = /^(https?:|mailto:)/i;
const SAFE_IMAGE_PROTOCOL = /^https?:/i;

function splitText(node: MdNode): MdNode[] {
  const text = node.value ?? "";
  const out: MdNode[] = [];
  let last = 0;
  for (const match of text.matchAll(ENTITY)) {
    const start = match.index ?? 0;
    if (start > last) out.push({ type: "text", value: text.slice(last, start) });
    const kind: EntityKind = match[1] ? "nct" : "pmid";
    const id = match[1] ?? match[2];
    out.push({
      type: "link",
      url: entityHref(kind, id),
      children: [{ type: "text", value: match[0] }],
      data: { hProperties: { dataEntity: `${kind}:${id}` } },
    });
    last = start + match[0].length;
  }
  if (last === 0) return [node];
  if (last < text.length) out.push({ type: "text", value: text.slice(last) });
  return out;
}

function linkEntities(node: MdNode): void {
  if (!node.children || node.type === "link" || node.type === "linkReference") return;
  node.children = node.children.flatMap((child) => {
    if (child.type === "text") return splitText(child);
    linkEntities(child);
    return [child];
  });
}

/** remark plugin: NCT01234567 and "PMID: 123" become entity links (not inside code or links). */
export function remarkEntityLinks() {
  return (tree: MdNode) => linkEntities(tree);
}

export const safeUrlTransform: UrlTransform = (url, _key, node) => {
  if (node.properties?.dataEntity) return url;
  return SAFE_PROTOCOL.test(url.trim()) ? url.trim() : "";
};

function entityOf(node: { properties?: Record<string, unknown> } | undefined): [EntityKind, string] | null {
  const value = node?.properties?.dataEntity;
  if (typeof value !== "string") return null;
  const [kind, id] = value.split(":");
  return kind === "nct" || kind === "pmid" ? [kind, id] : null;
}

/** The host an image would have been fetched from (http/https only), or "" when there is none. */
export function imageDomain(src: unknown): string {
  if (typeof src !== "string" || !SAFE_IMAGE_PROTOCOL.test(src)) return "";
  try {
    return new URL(src).hostname;
  } catch {
    return "";
  }
}

function components(onEntity?: OpenEntity): Components {
  return {
    a({ node, href, children }) {
      const entity = entityOf(node);
      if (entity) {
        return (
          <EntityLink kind={entity[0]} id={entity[1]} onEntity={onEntity}>
            {children}
          </EntityLink>
        );
      }
      if (!href) return <span className="unsafe-link">{children}</span>;
      return (
        <a href={href} target="_blank" rel="noopener noreferrer nofollow">
          {children}
        </a>
      );
    },
    table({ children }) {
      // A wide table scrolls inside the bubble instead of widening the tray; focusable so keys scroll it.
      return (
        <div className="table-scroll" role="region" aria-label="Table" tabIndex={0}>
          <table>{children}</table>
        </div>
      );
    },
    pre({ children, node: _node, ...rest }) {
      // A code block copies its own text (what is shown, e.g. a query to paste into PubMed).
      let element: HTMLPreElement | null = null;
      return (
        <div className="code-wrap">
          <pre {...rest} ref={(el) => void (element = el)}>
            {children}
          </pre>
          <CopyButton text={() => element?.textContent ?? ""} testId="code-copy" className="code-copy small-button" />
        </div>
      );
    },
    img({ src, alt }) {
      // Never fetch an image from an answer, nor offer a link to it: its URL (a query string especially)
      // is whatever the model or a poisoned source chose. Say what it was and where from, as plain text.
      const domain = imageDomain(src);
      const label = [alt, domain && (alt ? `(${domain})` : domain)].filter(Boolean).join(" ");
      return <span className="image-ref">{label ? `[image: ${label}]` : "[image]"}</span>;
    },
  };
}

export function Markdown({ text, onEntity }: { text: string; onEntity?: OpenEntity }) {
  // The components stay the same functions across renders (a new one would remount every link and code
  // block of the answer on each render of the tray); they call the latest onEntity.
  const onEntityRef = useRef(onEntity);
  onEntityRef.current = onEntity;
  const linked = onEntity !== undefined;
  const stable = useMemo(() => components(linked ? (kind, id) => onEntityRef.current?.(kind, id) : undefined), [linked]);
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={[remarkGfm, remarkEntityLinks]}
        skipHtml
        urlTransform={safeUrlTransform}
        components={stable}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
