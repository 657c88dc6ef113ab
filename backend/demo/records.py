"""The demo evaluator over records: AI columns on PubMed articles and ClinicalTrials.gov trials.

`backend/ai_columns/service.py` sends a record as labelled lines (title, publication types, MeSH terms,
phase, status, sex, ages, enrollment, interventions…) then the abstract or the eligibility text. Here those
fields decide what they can: a "Randomized Controlled Trial" publication type answers "randomized?", the
Sex line answers "women only?", the Minimum age line "accepts children?", the exclusion criteria "excludes
brain metastases?". A topic the title, abstract and MeSH terms never mention is a "no" (they say what the
article is about); "unknown" is kept for what the record truly does not carry, such as the eligibility of a
partial record or the blinding of a trial whose record does not describe its design.
"""

from __future__ import annotations

import re

from backend.demo.ages import age_bounds
from backend.demo.record_text import Decision, Record, sentences
from backend.demo.vocabulary import CLASSES, phases_in, statuses_in

# ---- words ------------------------------------------------------------------------------------------

_FRAME = re.compile(
    r"^\s*based on (?:the|its) [\w ]+?,|\b(?:is|are|does|do|did|has|have|was|were|this|these|the|a|an|"
    r"article|trial|study|paper|record|report(?:s|ed)?|mention(?:s|ed)?|about|on|of|any|each|it|its|in|with|"
    r"patients?|participants?|people|uses?|using|tests?|testing|stud(?:y|ies)|involves?|receive|measures?|describe|discuss|include|includes|concern|evaluate|investigate|focus|"
    r"whether|if|yes|no)\b", re.I)
_STOP = set("""and or for to by at as be been being any other than that which who their its into per via vs
versus""".split())


def topic_words(criterion: str) -> list[str]:
    """The words that carry a criterion's topic, in order ("Is this article about drug resistance?" →
    drug, resistance)."""
    first = re.split(r"(?<=[?.])\s", criterion.strip(), maxsplit=1)[0]
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9\-']*", _FRAME.sub(" ", first))
    return [w.lower() for w in words if w.lower() not in _STOP and len(w) > 1]


def _key(word: str) -> str:
    return word.lower()[:6] if len(word) > 6 else word.lower()


def _has_words(text: str, words: list[str]) -> bool:
    keys = {_key(w) for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9\-']*", text)}
    return all(_key(w) in keys for w in words)


_NEGATED = re.compile(r"\b(no|not|without|non-?|free of|absence of|never|neither|nor|na[iï]ve)\b", re.I)


def find(words: list[str], lines: list[str]) -> tuple[str, bool] | None:
    """(the first line naming every word, whether it negates them) or None."""
    for line in lines:
        if _has_words(line, words):
            first = min(i for i, w in enumerate(re.findall(r"[A-Za-z0-9][A-Za-z0-9\-']*", line))
                        if _key(w) in {_key(x) for x in words})
            before = " ".join(re.findall(r"[A-Za-z0-9][A-Za-z0-9\-']*", line)[:first][-4:])
            return line, bool(_NEGATED.search(before))
    return None


# ---- yes/no ---------------------------------------------------------------------------------------------

_RANDOM = re.compile(r"\brandomi[sz](?:ed|ation)|\brandomly (?:assigned|allocated)\b|\brct\b", re.I)
_NOT_RANDOM = re.compile(r"\bnon-?randomi[sz]ed\b|\bsingle[- ]arm\b|\bnot randomi[sz]ed\b", re.I)
_NON_TRIAL_TYPES = {"review", "systematic review", "meta-analysis", "case reports", "editorial", "letter",
                    "comment", "observational study", "news", "guideline", "practice guideline", "congress",
                    "historical article", "published erratum", "biography", "interview"}
AGE_GROUPS_OLD = {"aged", "aged, 80 and over"}
AGE_GROUPS_YOUNG = {"child", "child, preschool", "infant", "infant, newborn", "adolescent"}


def field_evidence(record: Record, label: str) -> list[str]:
    return [record.lines[label]] if label in record.lines else []


def _randomized(record: Record) -> Decision:
    types = [t.lower() for t in record.values("publication types")]
    if any("randomized controlled trial" == t for t in types):
        return Decision("yes", "Its publication types include Randomized Controlled Trial.",
                        field_evidence(record, "publication types"))
    lines = sentences(record.fields.get("title", "") + "\n" + record.fields.get("official title", "")) + \
        sentences(record.body) + sentences(record.eligibility)
    denial = next((s for s in lines if _NOT_RANDOM.search(s)), None)
    if denial:
        return Decision("no", "The record describes a non-randomized or single-arm design.", [denial])
    said = next((s for s in lines if _RANDOM.search(s)), None)
    if said:
        return Decision("yes", "The record describes random assignment.", [said])
    if record.kind == "trial":
        if record.fields.get("study type", "").lower().startswith("observational"):
            return Decision("no", "It is an observational study: nobody is assigned to a treatment.",
                            field_evidence(record, "study type"))
        return Decision("unknown", "The record does not describe how participants are allocated.", [])
    if set(types) & _NON_TRIAL_TYPES:
        return Decision("no", f"Its publication types ({'; '.join(record.values('publication types'))}) are not "
                              "those of a randomized trial.", field_evidence(record, "publication types"))
    if record.body:
        return Decision("no", "The abstract describes no randomization and the publication types do not list "
                              "a randomized controlled trial.", field_evidence(record, "publication types"))
    return Decision("unknown", "The record has no abstract and no telling publication type.", [])


def _mentioned(record: Record, words: list[str], what: str, absent_is_no: bool) -> Decision:
    lines = record.text().splitlines()
    hit = find(words, lines)
    if hit and not hit[1]:
        return Decision("yes", f"The record mentions {what}.", [hit[0]])
    if hit:
        return Decision("no", f"The record states the absence of {what}.", [hit[0]])
    if absent_is_no and (record.body or record.kind == "trial" and not record.partial):
        where = "The title, abstract, publication types and MeSH terms never mention" if record.kind == "article" \
            else "The record (title, conditions, interventions, summary, eligibility) never mentions"
        return Decision("no", f"{where} {what}.", [])
    return Decision("unknown", f"The record does not mention {what}, and its silence does not decide it.", [])


def _eligibility(record: Record, words: list[str], verb: str) -> Decision:
    thing = " ".join(words)
    if not record.eligibility:
        return Decision("unknown", "The record carries no eligibility criteria.", [])
    excluded = find(words, sentences(record.exclusion))
    included = find(words, sentences(record.inclusion))
    excepted = bool(excluded) and bool(re.search(r"\b(unless|except|allowed|permitted|eligible|stable|treated)\b",
                                                 excluded[0] if excluded else "", re.I))
    excluded_plainly = bool(excluded) and not excepted and not (excluded and excluded[1])
    if verb == "exclude":
        if excluded_plainly and excluded:
            return Decision("yes", f"The exclusion criteria name {thing}.", [excluded[0]])
        if included and included[1]:
            return Decision("yes", f"The criteria admit only patients without {thing}.", [included[0]])
        return Decision("no", f"The exclusion criteria do not rule out {thing}.",
                        [excluded[0]] if excluded else [])
    if verb == "require":
        if included and not included[1]:
            return Decision("yes", f"The inclusion criteria require {thing}.", [included[0]])
        return Decision("no", f"The inclusion criteria do not require {thing}.", [])
    if excluded_plainly and excluded:
        return Decision("no", f"The exclusion criteria rule out {thing}.", [excluded[0]])
    if excluded:
        return Decision("yes", f"The criteria allow {thing} under conditions.", [excluded[0]])
    if included and included[1]:
        return Decision("no", f"The inclusion criteria require patients without {thing}.", [included[0]])
    if included:
        return Decision("yes", f"The inclusion criteria admit {thing}.", [included[0]])
    return Decision("yes", f"The eligibility criteria do not exclude {thing}.", [])


def _age_years(value: str | None) -> float | None:
    if not value or "no limit" in value:
        return None
    match = re.match(r"(\d+)\s*(year|month|week|day)", value, re.I)
    if not match:
        return None
    scale = {"year": 1, "month": 1 / 12, "week": 1 / 52, "day": 1 / 365}[match.group(2).lower()]
    return int(match.group(1)) * scale


def _ages(record: Record, criterion: str) -> Decision | None:
    lowered = criterion.lower()
    young = re.search(r"\b(child|children|pediatric|paediatric|minors?|adolescents?|infants?|under 18|kids)\b", lowered)
    old = re.search(r"\b(elderly|older adults?|older patients|aged 65|over 65|65 (?:and|or) (?:older|over)|"
                    r"geriatric|over (\d+)|older than (\d+))\b", lowered)
    bounds = age_bounds(criterion)
    if not (young or old):
        return _age_span(record, bounds) if bounds and record.kind == "trial" else None
    if record.kind == "article":
        groups = {m.lower() for m in record.values("mesh terms")}
        wanted = AGE_GROUPS_YOUNG if young else AGE_GROUPS_OLD
        if groups & wanted:
            return Decision("yes", "Its MeSH terms list the age group.", field_evidence(record, "mesh terms"))
        if groups & {"adult", "middle aged", "young adult", *AGE_GROUPS_OLD, *AGE_GROUPS_YOUNG}:
            return Decision("no", "Its MeSH age groups do not include that group.",
                            field_evidence(record, "mesh terms"))
        return None  # no age groups indexed: the text may still say
    if record.partial:
        return Decision("unknown", "This record has no eligibility details (ages, sex).", [])
    low, high = _age_years(record.fields.get("minimum age")), _age_years(record.fields.get("maximum age"))
    evidence = field_evidence(record, "minimum age") + field_evidence(record, "maximum age")
    if young:
        ok = low is None or low < 18
        return Decision("yes" if ok else "no", "The minimum age " + ("admits" if ok else "excludes") +
                        " people under 18.", evidence)
    limit = float(next((g for g in old.groups()[1:] if g), 65)) if old else 65.0
    ok = high is None or high >= limit
    return Decision("yes" if ok else "no", f"The maximum age {'admits' if ok else 'excludes'} people over "
                                           f"{limit:g}.", evidence)


def _age_span(record: Record, bounds: tuple[float | None, float | None, bool, bool]) -> Decision:
    """Does the trial admit people of the criterion's ages ("aged 18 years or older")? Yes when the ranges
    overlap, no when they are apart."""
    if record.partial:
        return Decision("unknown", "This record has no eligibility details (ages, sex).", [])
    low, high = bounds[0], bounds[1]
    trial_low = _age_years(record.fields.get("minimum age")) or 0.0
    trial_high = _age_years(record.fields.get("maximum age"))
    evidence = field_evidence(record, "minimum age") + field_evidence(record, "maximum age")
    apart = (high is not None and trial_low > high) or (low is not None and trial_high is not None and trial_high < low)
    limits = f"{record.fields.get('minimum age', 'no limit')} to {record.fields.get('maximum age', 'no limit')}"
    if apart:
        return Decision("no", f"The trial's age limits ({limits}) fall outside the required age range.", evidence)
    return Decision("yes", f"The trial admits ages within the required age range (its limits: {limits}).", evidence)


def _sex(record: Record, criterion: str) -> Decision | None:
    lowered = criterion.lower()
    female = re.search(r"\b(women|woman|female|females)\b", lowered)
    male = re.search(r"\b(men|man|male|males)\b", lowered)
    if record.kind != "trial" or bool(female) == bool(male):
        return None
    if record.partial or "sex" not in record.fields:
        return Decision("unknown", "The record does not give the sexes it enrolls.", [])
    sex = record.fields["sex"].lower()
    wanted = "female" if female else "male"
    only = bool(re.search(r"\bonly\b|\bexclusively\b|\bjust\b", lowered))
    ok = sex == wanted if only else sex in (wanted, "all")
    return Decision("yes" if ok else "no", f"The record's sex field is {record.fields['sex']}.",
                    field_evidence(record, "sex"))


def _field_checks(record: Record, criterion: str) -> Decision | None:
    lowered = criterion.lower()
    if record.kind == "trial" and (phases := phases_in(criterion)):
        given = phases_in(record.fields.get("phase", "").replace("Early phase 1", "early phase 1"))
        ok = bool(set(phases) & set(given))
        return Decision("yes" if ok else "no", f"The record's phase is {record.fields.get('phase', 'not given')}.",
                        field_evidence(record, "phase"))
    if record.kind == "trial" and re.search(r"\b(recruiting|completed|terminated|withdrawn|suspended|ongoing|"
                                            r"active)\b", lowered) and "status" not in lowered.split()[:0]:
        wanted = statuses_in(criterion)
        status = record.fields.get("overall status", "").upper().replace(", ", "_").replace(" ", "_")
        if wanted and status:
            ok = status in wanted
            return Decision("yes" if ok else "no", f"The record's status is {record.fields['overall status']}.",
                            field_evidence(record, "overall status"))
    if re.search(r"\bhealthy volunteers?\b", lowered) and "accepts healthy volunteers" in record.fields:
        ok = record.fields["accepts healthy volunteers"] == "yes"
        return Decision("yes" if ok else "no", "The record says whether it accepts healthy volunteers.",
                        field_evidence(record, "accepts healthy volunteers"))
    if m := re.search(r"\b(?:more than|over|at least|above|greater than|>=?)\s*(\d[\d,]*)\s*(?:participants|patients|"
                      r"subjects|people|enrolled)", lowered):
        enrollment = record.fields.get("enrollment", "").replace(",", "")
        if record.kind == "trial" and enrollment.isdigit():
            ok = int(enrollment) > int(m.group(1).replace(",", "")) - ("at least" in m.group(0))
            return Decision("yes" if ok else "no", f"The record's enrollment is {enrollment}.",
                            field_evidence(record, "enrollment"))
    if record.kind == "article":
        types = {t.lower() for t in record.values("publication types")}
        for pattern, kind in ((r"meta-?analys", "meta-analysis"), (r"systematic review", "systematic review"),
                              (r"\breview\b", "review"), (r"case reports?", "case reports")):
            if re.search(pattern, lowered) and types:
                ok = kind in types or (kind == "review" and "systematic review" in types)
                return Decision("yes" if ok else "no", f"Its publication types are {'; '.join(sorted(types))}.",
                                field_evidence(record, "publication types"))
        mesh = {m.lower() for m in record.values("mesh terms")}
        if re.search(r"\bhumans?\b", lowered) and mesh:
            ok = "humans" in mesh
            return Decision("yes" if ok else "no", "Its MeSH terms " + ("include" if ok else "do not include") +
                            " Humans.", field_evidence(record, "mesh terms"))
        if re.search(r"\banimals?\b|\bmice\b|\brats?\b", lowered) and mesh:
            ok = "animals" in mesh or "mice" in mesh or "rats" in mesh
            return Decision("yes" if ok else "no", "Its MeSH terms " + ("include" if ok else "do not include") +
                            " animals.", field_evidence(record, "mesh terms"))
    return None


def _drug_class(record: Record, criterion: str) -> Decision | None:
    lowered = criterion.lower()
    for name, drugs in CLASSES.items():
        if name.lower() in lowered or (name == "checkpoint inhibitor" and "immunotherap" in lowered):
            # Not the eligibility: "prior X" there says nothing of whether the trial tests X.
            studied = [*record.lines.values(), *sentences(record.body)]
            hit = find_any(drugs + [name], studied)
            if hit:
                return Decision("yes", f"The record names a {name}.", [hit])
            if record.kind == "trial" and record.fields.get("interventions"):
                return Decision("no", f"None of its interventions is a {name} ({', '.join(drugs[:4])}…).",
                                field_evidence(record, "interventions"))
    return None


def find_any(words: list[str], lines: list[str]) -> str | None:
    for line in lines:
        if any(re.search(rf"\b{re.escape(w)}", line, re.I) for w in words):
            return line
    return None


def decide(criterion: str, record: Record) -> Decision:
    """Is the criterion true of this record? yes / no / unknown."""
    lowered = criterion.lower()
    if re.search(r"\brandomi[sz]|\brct\b", lowered):
        return _randomized(record)
    verb = re.search(r"\b(exclud\w*|allow\w*|accept\w*|permit\w*|requir\w*)\b", lowered)
    words = topic_words(re.sub(r"\b(exclud\w*|allow\w*|accept\w*|permit\w*|requir\w*|criteria|eligibility)\b",
                               " ", criterion, flags=re.I))
    for check in (_field_checks, _sex, _ages):
        if decision := check(record, criterion):
            return decision
    if verb and words and record.kind == "trial":
        kind = "exclude" if verb.group(1).startswith("exclud") else "require" if verb.group(1).startswith("requir") \
            else "allow"
        return _eligibility(record, words, kind)
    if decision := _drug_class(record, criterion):
        return decision
    if not words:
        return Decision("unknown", "The criterion names nothing the record could be checked for.", [])
    if re.search(r"\bplacebo\b", lowered):
        return _mentioned(record, ["placebo"], "a placebo", absent_is_no=True)
    if re.search(r"\bblind|\bmasked\b", lowered):
        text = record.text()
        if re.search(r"\bopen[- ]label\b|\bunblinded\b", text, re.I):
            return Decision("no", "The record describes an open-label design.",
                            [find_any(["open-label", "open label", "unblinded"], text.splitlines()) or ""])
        return _mentioned(record, ["blind"], "blinding", absent_is_no=False)
    # An article's abstract says what it is about; a trial record says what it studies, not everything it does.
    studied = record.kind == "article" or bool(re.search(r"\b(about|stud(?:y|ies)|tests?|testing|uses?|using|treat\w*|"
                                                         r"compar\w*|evaluat\w*|investigat\w*)\b", lowered))
    return _mentioned(record, words, " ".join(words), absent_is_no=studied)
