/**
 * What a search that found nothing offers instead: the same search with one thing dropped (a term, a filter,
 * the date range) or its terms OR-ed. Each offer's count is asked of the search API (one row a page) before it
 * is shown, so every offer finds something; clicking one runs it. Shared by Tablizer and TrialScout, which
 * say what their offers are (`looserArticleSearches`, `looserTrialSearches`).
 */
import { useEffect, useState } from "react";
import { plural } from "./counts";

export interface LooserSearch<S> {
  /** What changes, in a few words: "Drop “melanoma”", "Any status". */
  label: string;
  /** The looser search as the page would show it ("pembrolizumab"). */
  detail?: string;
  search: S;
}

type Found<S> = LooserSearch<S> & { count: number };

/** At most this many offers are counted: each is one search request. */
export const MAX_OFFERS = 8;

export function LooserSearches<S>({ searchKey, offers, count, onRun, one, many, hint }: {
  /** The search that found nothing: a new one counts its offers again. */
  searchKey: string;
  offers: Array<LooserSearch<S>>;
  /** How many rows a search finds (null: unknown). */
  count: (search: S, signal: AbortSignal) => Promise<number | null>;
  onRun: (search: S) => void;
  one: string;
  many?: string;
  /** What to try when no offer finds anything. */
  hint: string;
}) {
  const [found, setFound] = useState<{ key: string; offers: Array<Found<S>> } | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    const counted = offers.slice(0, MAX_OFFERS).map(async (offer): Promise<Found<S> | null> => {
      try {
        const n = await count(offer.search, controller.signal);
        return n ? { ...offer, count: n } : null;
      } catch {
        return null; // an offer that cannot be counted is not offered
      }
    });
    void Promise.all(counted).then((list) => {
      if (!controller.signal.aborted) setFound({ key: searchKey, offers: list.filter((o): o is Found<S> => o !== null) });
    });
    return () => controller.abort();
    // `offers` and `count` are rebuilt each render; the search they come from is `searchKey`.
  }, [searchKey]);

  const current = found?.key === searchKey ? found.offers : null;
  return (
    <div className="looser-searches" data-testid="looser-searches">
      <p role="status">
        {current === null
          ? `No ${many ?? `${one}s`} match. Looking for a looser search…`
          : current.length
            ? `No ${many ?? `${one}s`} match. ${current.length === 1 ? "This looser search finds some" : "These looser searches find some"}:`
            : `No ${many ?? `${one}s`} match${offers.length ? ", nor does any search with one thing less" : ""}. ${hint}`}
      </p>
      {current && current.length > 0 && (
        <ul className="looser-list">
          {current.map((offer) => (
            <li key={offer.label}>
              <button type="button" className="looser-offer" data-testid="looser-search" onClick={() => onRun(offer.search)}>
                <span className="looser-label">{offer.label}</span>
                {offer.detail && <span className="looser-detail">{offer.detail}</span>}
                <span className="looser-count">{plural(offer.count, one, many)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
