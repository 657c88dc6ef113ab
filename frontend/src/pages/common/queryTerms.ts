/**
 * A search's AND-ed terms, so a search that finds nothing can offer the same search without one of them:
 * "melanoma pembrolizumab" → ["melanoma", "pembrolizumab"]; `"drug resistance"[tiab] AND EGFR` →
 * [`"drug resistance"[tiab]`, "EGFR"]. Read as the offline parser reads PubMed and Essie text: quoted phrases,
 * parenthesised groups kept whole, a [tag] after a run of words tagging the run, AND / OR / NOT in any case.
 * null when the query is not a plain AND of terms (an OR or NOT at the top, AREA[...], unbalanced quotes or
 * brackets): loosening it term by term could change its meaning.
 */

type Token = { kind: "word" | "phrase" | "group" | "tag" | "op"; text: string };

function closing(query: string, start: number): number {
  let depth = 0;
  for (let i = start; i < query.length; i++) {
    const ch = query[i];
    if (ch === '"') {
      const end = query.indexOf('"', i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return i;
  }
  return -1;
}

function tokenize(query: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const ch = query[i];
    let end: number;
    let kind: Token["kind"];
    if (/\s/.test(ch)) {
      i++;
      continue;
    } else if (ch === '"') {
      end = query.indexOf('"', i + 1);
      kind = "phrase";
    } else if (ch === "(") {
      end = closing(query, i);
      kind = "group";
    } else if (ch === "[") {
      end = query.indexOf("]", i + 1);
      kind = "tag";
    } else if (ch === ")" || ch === "]") {
      return null;
    } else {
      end = i + (query.slice(i).match(/^[^\s()"[\]]+/)?.[0].length ?? 1) - 1;
      kind = "word";
    }
    if (end < 0) return null;
    const text = query.slice(i, end + 1);
    tokens.push({ kind: kind === "word" && /^(AND|OR|NOT)$/i.test(text) ? "op" : kind, text });
    i = end + 1;
  }
  return tokens;
}

export function queryTerms(query: string): string[] | null {
  if (/\b(AREA|RANGE)\[/.test(query)) return null;
  const tokens = tokenize(query);
  if (!tokens) return null;
  const terms: string[] = [];
  let run: string[] = []; // bare words in a row: a [tag] after them tags them all
  const flush = () => {
    terms.push(...run);
    run = [];
  };
  for (const token of tokens) {
    if (token.kind === "op") {
      if (token.text.toUpperCase() !== "AND") return null;
      flush();
    } else if (token.kind === "tag") {
      if (run.length) {
        terms.push(`${run.join(" ")}${token.text}`);
        run = [];
      } else if (terms.length) terms[terms.length - 1] += token.text;
      else return null;
    } else if (token.kind === "word") {
      run.push(token.text);
    } else {
      flush();
      terms.push(token.text);
    }
  }
  flush();
  return terms;
}
