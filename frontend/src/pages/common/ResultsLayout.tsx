/**
 * The frame of a results page (Tablizer, TrialScout): the statistics scope its charts read, the chat tray
 * bound to the page, the page's column (title, where its data comes from, research stream selector, then its own
 * content) and the detail panel beside it.
 */
import type { ComponentProps, ReactNode } from "react";
import type { PageChatBinding } from "../../chat/ChatTray";
import { WithChat } from "../../chat/WithChat";
import { StatsScopeContext, type StatsScope } from "../../charts/statsScope";
import { ResultsCountContext } from "../../resultsCount";
import { SourceBanner, type SourceKind } from "./SourceBanner";
import { StreamSelector } from "./streamSelection";

export function ResultsLayout({ testId, title, source, scope, binding, streams, detail, count = null, children }: {
  testId: string;
  title: string;
  /** Which of the sources the page searches: its banner names it. */
  source: SourceKind;
  scope: StatsScope;
  binding: PageChatBinding;
  streams: ComponentProps<typeof StreamSelector>;
  /** The detail panel, when a row is open. */
  detail: ReactNode;
  /** The rows the page shows (null before a search): the tray's "View N results" on a phone. */
  count?: number | null;
  children: ReactNode;
}) {
  return (
    <StatsScopeContext.Provider value={scope}>
      <ResultsCountContext.Provider value={count}>
      <WithChat binding={binding}>
        <div className="page-columns">
          <div className="page-content" data-testid={testId}>
            <h1 className="page-title">{title}</h1>
            <SourceBanner kind={source} />
            <StreamSelector {...streams} />
            {children}
          </div>
          {detail}
        </div>
      </WithChat>
      </ResultsCountContext.Provider>
    </StatsScopeContext.Provider>
  );
}
