import { EntityLink } from "../entities/EntityLink";
import { CardShell } from "./CardShell";
import { asList, asText, formatCount } from "./display";
import type { CardProps } from "./types";

const SHOWN = 10;

/** `pubmed_search_results`: a page of PubMed results (tool payload from search_pubmed). */
export function PubMedSearchResultsCard(props: CardProps) {
  const { query, total_count } = props.payload.data;
  const articles = asList(props.payload.data.articles) as Array<Record<string, unknown>>;
  const total = total_count ?? articles.length;
  return (
    <CardShell {...props} title="PubMed search results">
      <p>
        {query ? <code>{asText(query)}</code> : null} {formatCount(total)} {total === 1 ? "article" : "articles"}
      </p>
      <ol className="result-list">
        {articles.slice(0, SHOWN).map((a, i) => (
          <li key={asText(a.pmid) || i}>
            <EntityLink kind="pmid" id={asText(a.pmid)} onEntity={props.onEntity}>
              PMID {asText(a.pmid)}
            </EntityLink>{" "}
            {asText(a.title)}
            <span className="muted">
              {" "}
              {[asText(a.journal), asText(a.year)].filter(Boolean).join(", ")}
            </span>
          </li>
        ))}
      </ol>
      {articles.length > SHOWN && <p className="muted">…and {articles.length - SHOWN} more in this result</p>}
    </CardShell>
  );
}
