import type { Article } from "../../api/types";
import { displayValue, snapshotLabel } from "../../cards/display";

export function ArticleDetail({ article, loading, error }: { article: Article | null; loading: boolean; error: string | null }) {
  if (!article) return <p className="muted">{loading ? "Loading…" : error ?? "Not found."}</p>;
  const authors = Array.isArray(article.authors) ? article.authors.join(", ") : displayValue(article.authors);
  const mesh = Array.isArray(article.mesh_terms) ? article.mesh_terms : [];
  return (
    <article className="article-detail" data-testid="article-detail">
      <h3>{article.title}</h3>
      <p className="muted">
        {[article.journal, article.year].filter(Boolean).join(", ")} · PMID {article.pmid}
        {snapshotLabel(article) && ` · ${snapshotLabel(article)}`}
      </p>
      {authors && <p className="small">{authors}</p>}
      {loading && <p className="muted small">Loading full record…</p>}
      {error && <p className="error-text" role="alert">{error}</p>}
      {article.abstract ? <p className="prewrap abstract">{article.abstract}</p> : !loading && <p className="muted">No abstract.</p>}
      {mesh.length > 0 && (
        <section>
          <h4>MeSH terms</h4>
          <ul className="tag-list">
            {mesh.map((m) => (
              <li key={String(m)}>{displayValue(m)}</li>
            ))}
          </ul>
        </section>
      )}
      <p className="row-gap">
        <a href={`https://pubmed.ncbi.nlm.nih.gov/${encodeURIComponent(article.pmid)}/`} target="_blank" rel="noopener noreferrer">
          Open in PubMed
        </a>
        {article.doi && (
          <a href={`https://doi.org/${article.doi}`} target="_blank" rel="noopener noreferrer">
            DOI {article.doi}
          </a>
        )}
      </p>
    </article>
  );
}
