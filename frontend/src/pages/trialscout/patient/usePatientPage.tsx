/**
 * What TrialScout adds for a patient, in one hook so the page only places it: the panel, the fit column,
 * its sort key and verdict filter, the criteria view of the open trial, `context.screening`, Accept for the
 * assistant's profile-edit and screening cards, and the patient/screening ids in the URL.
 */
import { useCallback, useMemo, useState } from "react";
import { screeningApi, type PatientProfile, type ScreenRequest, type TrialVerdict } from "../../../api/screening";
import type { TrialSummary } from "../../../api/types";
import { useUrlSync, type UrlPatch } from "../../../state/urlState";
import type { LocalCounts } from "../../../charts/statsScope";
import { fitColumn, filterByVerdict, fitStats, VERDICTS } from "./fit";
import { PatientPanel } from "./PatientPanel";
import { TrialCriteria } from "./TrialCriteria";
import { screeningContext, usePatientScreening } from "./usePatientScreening";

interface IdsInUrl {
  patient: number | null;
  screening: number | null;
}

const idParam = (v: string | null) => (v && /^\d{1,10}$/.test(v) ? Number(v) : null);
const encodeIds = (v: IdsInUrl): UrlPatch => ({
  patient: v.patient == null ? null : String(v.patient),
  screening: v.patient == null || v.screening == null ? null : String(v.screening),
});
const decodeIds = (p: URLSearchParams): IdsInUrl => ({ patient: idParam(p.get("patient")), screening: idParam(p.get("screening")) });

export function usePatientPage({ loaded, viewerId, onFindTrials }: {
  /** The table's loaded rows (what "Screen the loaded trials" screens). */
  loaded: TrialSummary[];
  viewerId: string | null;
  onFindTrials: (profile: PatientProfile) => void;
}) {
  const ps = usePatientScreening();
  const [shown, setShown] = useState<Set<TrialVerdict>>(new Set());
  // Folded to one line unless the user opens it (or a saved view had it open).
  const [collapsed, setCollapsed] = useState(true);
  const [restoring, setRestoring] = useState(() => decodeIds(new URLSearchParams(window.location.search)).patient != null);
  const { screening, patient } = ps;

  useUrlSync<IdsInUrl>({
    encode: encodeIds,
    decode: decodeIds,
    current: restoring ? null : { patient: patient?.id ?? null, screening: screening?.id ?? null },
    entry: (v) => `${v.patient}/${v.screening}`,
    apply: (v) => {
      if (v.patient == null) {
        if (patient) ps.close();
        setRestoring(false);
      } else if (v.patient !== patient?.id) {
        void ps.loadPatient(v.patient, v.screening).finally(() => setRestoring(false));
      } else if (v.screening != null && v.screening !== screening?.id) {
        void ps.loadScreening(v.screening);
      }
    },
  });

  const byId = useMemo(() => new Map((screening?.trials ?? []).map((t) => [t.nct_id, t])), [screening?.trials]);
  const running = screening?.status === "running";
  const pending = useMemo(() => new Set(running ? loaded.map((t) => t.nct_id).filter((id) => !byId.has(id)) : []), [running, loaded, byId]);
  const columns = useMemo(() => (screening ? [fitColumn(byId, pending)] : []), [screening, byId, pending]);
  const filterRows = useCallback((rows: TrialSummary[]) => (screening ? filterByVerdict(rows, byId, shown) : rows), [screening, byId, shown]);

  // The fit column as the charts panel counts it: the screening's verdicts; a click shows that verdict's rows.
  const chartCounts = useMemo<Record<string, LocalCounts> | undefined>(() => {
    if (!screening) return undefined;
    return { fit: {
      stats: fitStats(screening.trials, screening.id, running),
      select: (value) => { if ((VERDICTS as string[]).includes(value)) setShown(new Set([value as TrialVerdict])); },
    } };
  }, [screening, running]);

  const openTrial = viewerId ? byId.get(viewerId) : undefined;
  const criteria = openTrial ? <TrialCriteria trial={openTrial} sentences={screening?.sentences ?? []} /> : null;

  const handlers = {
    patient_profile_edit: async (data: Record<string, unknown>) => {
      const id = Number(data.patient_id);
      if (!Number.isInteger(id) || !data.profile || typeof data.profile !== "object") throw new Error("This card has no profile to apply.");
      const updated = await screeningApi.updatePatient(id, { profile: data.profile as PatientProfile });
      if (patient?.id === id) ps.setPatient(updated);
      else await ps.loadPatient(id);
      void ps.refreshPatients();
    },
    screening_proposal: async (data: Record<string, unknown>) => {
      const id = Number(data.patient_id);
      if (!Number.isInteger(id) || !data.request || typeof data.request !== "object") throw new Error("This card has no screening to start.");
      if (patient?.id !== id) await ps.loadPatient(id);
      setShown(new Set());
      void ps.screen(data.request as ScreenRequest, id);
    },
  };

  const panel = (
    <PatientPanel ps={ps} loadedNctIds={loaded.map((t) => t.nct_id)} onFindTrials={onFindTrials} shown={shown}
      onShow={setShown} collapsed={collapsed} onCollapse={setCollapsed} />
  );

  return { ps, panel, columns, filterRows, criteria, handlers, context: screeningContext(ps, viewerId), filtering: shown.size > 0,
           chartCounts, collapsed, setCollapsed };
}
