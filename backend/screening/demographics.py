"""Age, sex and pregnancy criteria against the note: the demo judge's reading of who the patient is.

An age limit as a screener reads it ("18 to 75", "under 18 or over 65" is outside a band, "6 months or
older"); a one-sex criterion and the boilerplate around it; pregnancy, nursing and contraception, where a
negative test, a past or planned pregnancy is not a current one and a woman the note calls postmenopausal is
not asked for a test. `demo_judge` asks `judge_age` and `judge_sex` first.
"""

from __future__ import annotations

import re

from backend.screening.judged import Judged
from backend.screening.measures import AT_LEAST, AT_MOST
from backend.screening.note_reader import NoteText

# ---- ages -------------------------------------------------------------------------------------------

_YEARS = r"(?:years?|yrs?|y\.?o\.?|year-old|years-old|y\b)(?:\s*old)?"
_RANGE = r"(?:-|to|through|thru|and)"
_AGE_NUMBER = re.compile(rf"(\d{{1,3}}(?:\.\d+)?)\s*(?:{_YEARS}|(?=\s*{_RANGE}\s*\d+(?:\.\d+)?\s*{_YEARS}))|"
                         rf"\bage[sd]?\W*(?:of|is|at|between|from|range)?\s*(?:{AT_LEAST}|{AT_MOST}|=|older than|"
                         rf"younger than)?\s*(\d{{1,3}}(?:\.\d+)?)",
                         re.I)
_LOW_CUE = re.compile(rf"(?:{AT_LEAST}|older than|minimum|from|between|aged|ages|age)\W*$", re.I)
_HIGH_CUE = re.compile(rf"(?:{AT_MOST}|younger than|maximum|no older than|not older than|{_RANGE})\W*$", re.I)
_OLDER_AFTER = re.compile(rf"^\W*(?:{_YEARS}\W*)?(?:(?:or|and)\s+(?:older|over|above|more|greater)|\+)", re.I)
_YOUNGER_AFTER = re.compile(rf"^\W*(?:{_YEARS}\W*)?(?:or|and)\s+(?:younger|under|below|less)", re.I)


def age_bounds(text: str) -> tuple[float | None, float | None] | None:
    """(low, high) in years from an age criterion; None when it sets no age limit we can read. Only
    numbers that carry a unit of age ("18 years", "6 months") or follow the word age count."""
    t = text.lower().replace("≥", ">=").replace("≤", "<=").replace("–", "-").replace("—", "-")
    for unit, per_year in (("months?", 12), ("weeks?", 52)):
        def in_years(m: re.Match[str], d: int = per_year) -> str:
            return f"{float(m.group(1)) / d:.4f} years"
        t = re.sub(rf"(\d+(?:\.\d+)?)\s*(?:-|\s)?{unit}(?:\s*old)?\b", in_years, t)
    span = re.search(r"\bage[sd]?\b\W*(?:between|from|of|range)?\W*(\d{1,3}(?:\.\d+)?)\s*(?:years?)?\s*"
                     rf"{_RANGE}\s*(\d{{1,3}}(?:\.\d+)?)\b(?!\s*%)", t)
    if span and float(span.group(1)) < float(span.group(2)):
        return float(span.group(1)), float(span.group(2))
    if re.search(r"<\s*\d+[^<>]*\bor\b[^<>]*>\s*\d+|>\s*\d+[^<>]*\bor\b[^<>]*<\s*\d+", t):
        return None  # "< 18 or > 90": outside a band
    low: float | None = None
    high: float | None = None
    for m in _AGE_NUMBER.finditer(t):
        value = float(m.group(1) or m.group(2))
        before, after = t[max(0, m.start() - 25): m.start()], t[m.end(): m.end() + 20]
        if (re.search(r"\b(?:within|past|last|previous|prior|for|since|ago|duration|history|lasting|during)\b",
                      before) and not re.search(r"\bage", before)) or \
                re.match(r"\s*(?:ago|prior|before|after|since|post|of (?:follow|treatment|disease|history))", after):
            continue  # a duration, not an age
        lead = t[m.start(): m.start(2)] if m.group(2) else ""  # "age < 65": the comparison is inside the match
        if _YOUNGER_AFTER.match(after) or re.search(rf"(?:{AT_MOST}|younger than)\W*$", lead):
            high = value
        elif re.search(rf"(?:{AT_LEAST}|older than)\W*$", lead):
            low = value
        elif _OLDER_AFTER.match(after) or (low is None and _LOW_CUE.search(before) and not _HIGH_CUE.search(before)):
            low = value
        elif _HIGH_CUE.search(before):
            high = value if low is not None or not re.search(rf"\b{_RANGE}\W*$", before) else high
            if low is None and re.search(rf"\b{_RANGE}\W*$", before):
                continue
        elif low is None:
            low = value  # "age 18" alone, or the first number of "18 - 65 years"
        else:
            high = value
    if low is not None and high is not None and low > high:
        return None  # "< 18 or > 90": outside a band, not a band
    if low is None and high is None:
        if re.fullmatch(r"\W*(?:adults?|adult patients?|aged? (?:over|above) 18)\W*", t):
            return 18.0, None
        return None
    return low, high


# A criterion that never speaks of age but of a period ("a doubling time of less than 6 months", "4 weeks
# must have passed") sets a duration, not an age limit.
_AGE_WORD = re.compile(r"\b(?:age[sd]?|old|older|younger|adults?|child(?:ren)?|infants?|toddlers?|newborns?|neonates?|"
                       r"adolescents?|y\.?o|year-old|years-old)\b", re.I)
_DURATION = re.compile(r"\b(?:period|time|interval|passed|elapsed|duration|expectancy|survival|follow|diagnos\w*|"
                       r"history|treat\w*|therap\w*|doubling|within|since|ago|prior|previous|last|past|months?|"
                       r"weeks?|days?|hours?|dose|course|cycles?)\b", re.I)
# Ages that set no limit on the patient: whom another requirement is for ("ECOG 0-1 (18 years or older) or Lansky
# >= 60 (under 16)", "consent from a parent if the child is under 12", "for those aged 50 or above: a colonoscopy"),
# a period in parentheses ("recent (< 3 months)"), a bone age, the Cockcroft-Gault formula's "(140 - age)".
_WHO = (r"(?:adults?|child(?:ren)?|infants?|patients?|subjects?|participants?|volunteers?|individuals?|persons?|people|"
        r"men|women|males?|females?|boys?|girls?|age[sd]?|old|those)")
_CONDITIONAL_AGE = re.compile(rf"\b(?:if|when|whenever|among|in|for)\s+(?:the\s+|a\s+)?(?:{_WHO}\s+)?"
                              r"(?:who\s+(?:is|are)\s+|aged?\s+|is\s+|are\s+)?"
                              r"(?:[<>≤≥]|\d|(?:older|younger|over|under|above|below|greater|less|between)\b)[^;.()]*",
                              re.I)
_ASIDE = re.compile(r"(\S+)\s*\(([^()]{0,80})\)")
_OTHER_AGE = re.compile(r"\b(?:bone|skeletal|gestational|mental|developmental|reading|corrected|post-?conceptional|"
                        r"menstrual)\s+age\b[^,;.]*|[(\[]\s*140\s*[-−–]\s*age\s*[)\]]", re.I)
_OTHER_UNIT = re.compile(r"^\s*(?:mm|bpm|beats|mg|g\b|g/|%|kg|ml|mmol|µ|u/|iu|cm|°|/|x\b|times|ng|pg|points?)", re.I)


def _limit_text(criterion: str) -> str:
    """The criterion without the ages that limit someone or something else than the patient."""
    text = _OTHER_AGE.sub(" ", criterion)
    text = _ASIDE.sub(lambda m: m.group(0) if re.fullmatch(_WHO, m.group(1), re.I) or not re.search(r"\d", m.group(2))
                      else m.group(1), text)
    return _CONDITIONAL_AGE.sub(" ", text)


# "under 18 or over 65 years": the limit is outside a band (an exclusion's usual form).
_NUM = r"(\d{1,3}(?:\.\d+)?)"
_OUTSIDE_BAND = re.compile(rf"(?:<|less than|under|younger than|below)\s*{_NUM}[^<>]*?\bor\b[^<>]*?"
                           rf"(?:>|greater than|more than|over|older than|above)\s*{_NUM}", re.I)
# Who a criterion is about, said around an age or sex limit ("of either sex and any race", "male subjects"):
# words that set no limit of their own.
_DEMOGRAPHIC = (r"sex|sexes|gender|genders|either|both|any|race|races|ethnic\w*|origin|registered|patients?|subjects?|"
                r"participants?")
# "25-40 years, or >= 65 years"; "18 to 60 years of age and over 60": alternatives, the patient fits any.
_AGE_ALTERNATIVE = re.compile(r"\bor\b(?=\s*(?:[<>]=?|≥|≤|aged?\b|\d))|\band\b(?=\s*(?:over|above|older than)\s*\d)",
                              re.I)


# "Volunteers aged 18 to 30 … Patient characteristics: Age: 18 to 65": two groups' limits in one block of text
_AGE_THEN_NUMBER = re.compile(r"\bage[sd]?\b\W*(?:of\s+|between\s+|from\s+)?(?=\d)", re.I)


def _two_age_groups(criterion: str) -> bool:
    starts = [m.start() for m in _AGE_THEN_NUMBER.finditer(criterion)]
    if len(starts) < 2 or _AGE_ALTERNATIVE.search(criterion):
        return False
    bounds = [b for b in (age_bounds(criterion[a:z]) for a, z in zip(starts, [*starts[1:], len(criterion)],
                                                                      strict=True)) if b is not None]
    return any(x is not None and y is not None and x != y  # "Age 6 months to 12 years (< 13)" is one group
               for first in bounds for second in bounds for x, y in zip(first, second, strict=True))


def judge_age(note: NoteText, criterion: str) -> Judged | None:
    criterion = _limit_text(criterion)
    if not _AGE_WORD.search(criterion) and _DURATION.search(criterion) or _two_age_groups(criterion):
        return None
    band = _OUTSIDE_BAND.search(criterion.replace("≥", ">=").replace("≤", "<="))
    if band and any(_OTHER_UNIT.match(criterion[band.end(i):]) for i in (1, 2)):
        band = None  # "below 45 bpm or above 120 bpm": a band of something else
    if band and float(band.group(1)) < float(band.group(2)):
        if note.age is None:
            return Judged("unknown", "The criterion sets an age limit and the note gives no age.", [])
        age, where = note.age
        outside = age < float(band.group(1)) or age > float(band.group(2))
        where_to = "outside" if outside else "within"
        return Judged("yes" if outside else "no",
                      f"The patient is {age:g}, {where_to} {band.group(1)}-{band.group(2)}.", [where])
    parts = [b for b in (age_bounds(p) for p in _AGE_ALTERNATIVE.split(criterion)) if b is not None]
    bounds = age_bounds(criterion) if len(parts) < 2 else parts[0]
    if bounds is None:
        return None
    rest = re.sub(r"\b(?:age[sd]?|years?|yrs?|old|older|younger|of|or|and|at|least|over|under|above|below|between|"
                  r"than|to|through|thru|the|time|signing|informed|consent|form|screening|enrollment|enrolment|inclusion|"
                  r"male|female|males|females|men|women|adults?|children|must|be|is|are|who|with|in|a|an|greater|"
                  r"less|equal|more|up|from|inclusive|aged|months?|visit|day|study|entry|date|limits?|minimum|maximum|"
                  # boilerplate around an age limit ("Patient characteristics: Age: over 18", "< 75 years of
                  # age, but > 40")
                  rf"{_DEMOGRAPHIC}|characteristics|demographics?|but|protocol|chronologic(?:al)?)\b|[\d\W_]+", " ",
                  criterion.lower())
    if note.age is None:
        return Judged("unknown", "The criterion sets an age limit and the note gives no age.", [])
    age, where = note.age
    inside = any((low is None or age >= low) and (high is None or age <= high)
                 for low, high in (parts if len(parts) >= 2 else [bounds]))
    if not inside:
        return Judged("no", f"The patient is {age:g}, outside the age limit.", [where])
    wanted = _one_sex(criterion)
    if wanted and note.sex and note.sex[0] != wanted:  # "women aged 18-65" for a man: the age fits, the sex not
        return Judged("no", f"The criterion is about {wanted}s; the patient is {note.sex[0]}.", [note.sex[1]])
    if rest.split():
        return None  # the age fits; what else the criterion asks decides
    return Judged("yes", f"The patient is {age:g}, within the age limit.", [where])


# ---- sex and pregnancy ------------------------------------------------------------------------------

# The words that name one sex, in a criterion ("women aged 18-65", "male patients").
_WOMEN = r"females?|women|woman|girls?"
_MEN = r"males?|men|man|boys?"
_SEX_WORDS = re.compile(rf"\b(?:{_MEN}|{_WOMEN}|{_DEMOGRAPHIC}|and|or|all|only|of|postmenopausal|premenopausal|"
                        r"eligible|are|is|will|be|included|enrolled|accepted)\b", re.I)
# "both sexes", "either gender", "male or female": the criterion admits anyone, whatever the note says.
_EITHER_SEX = re.compile(r"\b(?:(?:both|either|all|any) (?:sexes|sex|genders?)|(?:males?|men) (?:and|or|and/or) "
                         r"(?:females?|women)|(?:females?|women) (?:and|or|and/or) (?:males?|men))\b", re.I)
_SEX_NAMED = (("female", re.compile(rf"\b(?:{_WOMEN}|postmenopausal|premenopausal)\b", re.I)),
              ("male", re.compile(rf"\b(?:{_MEN})\b", re.I)))

_FEMALE_ONLY = re.compile(r"\b(?:pregnan\w*|lactat\w*|breast[- ]?feed\w*|nursing (?:women|mothers|a baby)|"
                          r"childbearing|child-bearing|contracepti\w*|hcg|birth control)", re.I)
# A negative pregnancy test, pregnancies in the past ("an ectopic pregnancy at age 26", "a history of 3
# pregnancies") or the pregnancy the patient was born from are not a current pregnancy.
_NOT_PREGNANT_NOW = re.compile(r"\b(?:planning|plans?|desires?|wish\w*|wants?|considering)\s+(?:a\s+)?(?:future\s+)?"
                               r"pregnanc|\b(?:pregnancy test|hcg)\b[^.;]{0,80}\bnegative\b|\bnegative\b[^.;]{0,30}"
                               r"\b(?:pregnancy test|hcg)\b|\b(?:ectopic|prior|previous|past|former|earlier|last)"
                               r"\s+pregnanc|\bhistory of (?:\w+\s+){0,2}pregnanc|"
                               r"\bborn\b[^.;]*\bpregnanc|"
                               r"\bpregnanc\w*\s+(?:at age|in \d{4}|\d+ (?:years?|months?) ago)",
                               re.I)
# after the birth: the note's pregnancy is over
_POSTPARTUM = re.compile(r"\bpost-?partum\b|\bdelivered\b|\b(?:weeks?|days?|months?) after (?:an? |her )?"
                         r"(?:\w+\s+){0,2}(?:delivery|birth|c-section|cesarean|caesarean)\b", re.I)
# A woman the note calls postmenopausal (or whose uterus or ovaries were removed) cannot become pregnant; an
# inclusion asking for a negative test, no pregnancy or contraception then holds (stated only, not guessed
# from her age: the TrialGPT experts call that "not enough information").
_PAST_CHILDBEARING = re.compile(r"\b(?:post-?menopaus\w*|hysterectomy|(?:bilateral )?oophorectomy)\b", re.I)
# ("Women of childbearing potential" alone asks for fertility; with "must use contraception" it binds them.)
_NOT_PREGNANT_ASKED = re.compile(r"\bnegative\b|\b(?:not|non|no)\b[\w\s-]{0,20}(?:pregnan|lactat|breast)|contracep|"
                                 r"birth control", re.I)
_NO_CONTRACEPTION = re.compile(r"(?:\b(?:no|not|denies|without)\b|n't)[^.;]{0,30}(?:contracep|birth control)", re.I)
# what a criterion asks of contraception: that she use it ("must use highly effective contraception"), or excludes
# those who do not ("not using adequate contraception"); other mentions ("oral contraceptives" as a drug) neither
_USE_CONTRACEPTION = re.compile(r"\b(?:must|agrees?|agreed|willing|required|should|will)\b[^.;]{0,40}"
                                r"\b(?:use|practi[cs]e)\b[^.;]{0,50}(?:contracep|birth control)", re.I)
_NOT_USING_CONTRACEPTION = re.compile(r"\b(?:not|unwilling to|unable to|failure to|fail to|refus\w* to)\s+"
                                      r"(?:currently\s+|agreed? to\s+)?(?:using|use|practi[cs]ing|practi[cs]e|on)\b"
                                      r"[^.;]{0,50}"
                                      r"(?:contracep|birth control)", re.I)
# pregnancy as a time ("alcohol use during pregnancy") or a kind of disorder ("hypertensive disorder of pregnancy"),
# not a state
_DURING_PREGNANCY = re.compile(r"\b(?:during|in|throughout|before|after|prior to|since|preceding|following|of) "
                               r"(?:the |her |this )?(?:current |index |first |last |most recent )?pregnancy\b")
# a method of contraception the note says the woman uses
_CONTRACEPTION = re.compile(r"\b(?:IUDs?|intrauterine (?:device|system)|"
                            r"contraceptive (?:implant|pill|injection|patch|ring)|"
                            r"(?:oral )?contraceptives?|contraception|birth control|depo-?provera|tubal ligation|"
                            r"etonogestrel|levonorgestrel|medroxyprogesterone|vasectomized partner)\b", re.I)
_MENOPAUSE = re.compile(r"\b(pre|post|peri)-?menopaus\w*", re.I)


def _one_sex(criterion: str) -> str | None:
    """The sex a criterion limits itself to, when it names exactly one ("women aged 18-65")."""
    if _EITHER_SEX.search(criterion) or _FEMALE_ONLY.search(criterion):
        return None  # a pregnancy or contraception clause is conditional ("women of childbearing potential must…")
    named = [sex for sex, pattern in _SEX_NAMED if pattern.search(criterion)]
    return named[0] if len(named) == 1 else None


_NURSING = re.compile(r"\b(?:breast[- ]?feed\w*|lactat\w*|nursing)\b", re.I)
_NOT_NURSING = re.compile(r"\b(?:not|no longer|never|stopped|denies|weaned)\b[\w\s-]{0,20}(?:breast[- ]?feed|lactat|"
                          r"nursing)", re.I)
# a pregnancy the patient plans, against a criterion that excludes one ("intending to become pregnant")
_INTENT_ASKED = re.compile(r"\b(?:intend\w*|plan\w*|wish\w*|desir\w*|hop\w*|trying)\b[^.;]{0,30}"
                           r"(?:pregnan|conceiv)", re.I)
_INTENDS = re.compile(r"\b(?:hop\w*|plan\w*|trying|tries|wants?|wish\w*|desir\w*|intend\w*)\s+(?:to\s+)?"
                      r"(?:conceive|become pregnant|get pregnant|a pregnancy|pregnancy)|\bpreconception\b", re.I)


def _nursing(note: NoteText) -> tuple[bool, int] | None:
    """(breastfeeding?, sentence) as the note says, or None when it does not."""
    for i, sentence in enumerate(note.sentences):
        if _NURSING.search(sentence):
            return not _NOT_NURSING.search(sentence), i
    return None


def judge_sex(note: NoteText, criterion: str, kind: str) -> Judged | None:
    sex = note.sex
    lowered = criterion.lower()
    if _FEMALE_ONLY.search(_DURING_PREGNANCY.sub(" ", lowered)):
        if sex and sex[0] == "male":
            return Judged("not_applicable", "The criterion concerns women and the patient is male.", [sex[1]])
        if (asked := _NURSING.search(lowered)) and (nursing := _nursing(note)) is not None:
            denied = bool(re.search(r"\b(?:not|non|no)\b[\w\s,-]{0,30}$", lowered[: asked.start()]))
            if nursing[0] and kind == "exclusion":
                return Judged("yes", "The note says the patient is breastfeeding.", [nursing[1]])
            if nursing[0] and kind == "inclusion":
                return Judged("no" if denied else "yes", "The note says the patient is breastfeeding.", [nursing[1]])
        if kind == "exclusion" and _INTENT_ASKED.search(lowered):
            intends = next((i for i, t in enumerate(note.sentences) if _INTENDS.search(t)), None)
            if intends is not None:
                return Judged("yes", "The note says the patient plans a pregnancy.", [intends])
        pregnant = note.mention(["pregnant"])
        if pregnant and pregnant[0] == "present" and (_NOT_PREGNANT_NOW.search(note.sentences[pregnant[1]]) or any(
                _POSTPARTUM.search(t) for t in note.sentences)):
            pregnant = ("absent", pregnant[1])
        if re.search(r"\b(?:not|non|no)\b[\w\s-]{0,20}pregnan", lowered) and kind == "inclusion" and sex and not (
                pregnant and pregnant[0] == "present"):
            return Judged("yes", "The note does not describe a pregnancy.", [sex[1]])
        if pregnant and pregnant[0] == "present" and re.search(r"(?<!desire )(?<!planning )(?<!plan )pregnan",
                                                                 lowered):
            return Judged("yes", "The note says the patient is pregnant.", [pregnant[1]])
        if pregnant and pregnant[0] == "absent" and kind == "exclusion" and "pregnan" in lowered:
            return Judged("no", "The note shows the patient is not pregnant.", [pregnant[1]])
        if sex and re.search(r"\bpostmenopausal\b", lowered) and re.search(r"\bpostmenopausal\b",
                                                                           " ".join(note.sentences).lower()):
            return Judged("yes", "The note describes a postmenopausal woman.", [sex[1]])
        asks_not = _NOT_USING_CONTRACEPTION.search(lowered)
        if sex and (asks_not or _USE_CONTRACEPTION.search(lowered)):
            uses = next((i for i, t in enumerate(note.sentences)
                         if _CONTRACEPTION.search(t) and not _NO_CONTRACEPTION.search(t)), None)
            if uses is not None:
                return Judged("no" if asks_not else "yes", "The note says the patient uses contraception.", [uses])
        after = next((i for i, t in enumerate(note.sentences) if _PAST_CHILDBEARING.search(t)), None)
        if sex and after is not None:  # a pregnancy test or contraception binds only women who could conceive
            if kind == "exclusion" or _NOT_PREGNANT_ASKED.search(lowered):
                return Judged("no" if kind == "exclusion" else "yes",
                              "The note describes a woman past childbearing (postmenopausal).", [after])
        return Judged("unknown", "The note does not say whether the patient is pregnant, nursing or could "
                                 "become pregnant.", [])
    meno = _MENOPAUSE.search(lowered)
    if meno and len(lowered) < 40:
        if sex and sex[0] == "male":
            return Judged("not_applicable", "The criterion concerns women and the patient is male.", [sex[1]])
        if note.age is None or sex is None:
            return Judged("unknown", "The note does not say enough to tell the menopausal status.", [])
        age = note.age[0]
        post = age >= 55 or "postmenopausal" in " ".join(note.sentences).lower()
        pre = age < 45 and not post
        if not (post or pre):
            return Judged("unknown", "The patient's age does not settle the menopausal status.", [])
        holds = post if meno.group(1) == "post" else pre
        return Judged("yes" if holds else "no", f"A {age:g}-year-old woman is "
                                                f"{'postmenopausal' if post else 'premenopausal'}.", [note.age[1]])
    lowered = re.sub(r"^\s*\d+[.)]\s*", "", lowered)  # a list's own numbering ("3. Gender: …")
    if _SEX_WORDS.sub(" ", lowered).strip(" .,;:-()") or not re.search(
            rf"\b(?:{_MEN}|{_WOMEN})\b", lowered) and not _EITHER_SEX.search(lowered):
        return None
    if _EITHER_SEX.search(lowered):
        return Judged("yes", "The criterion admits either sex.", [sex[1]] if sex else [])
    if sex is None:
        return Judged("unknown", "The criterion concerns sex and the note does not state it.", [])
    wants_f = bool(re.search(rf"\b(?:{_WOMEN})\b", lowered))
    wants_m = bool(re.search(rf"\b(?:{_MEN})\b", lowered))
    if wants_f and wants_m:
        return Judged("yes", f"The criterion admits either sex; the patient is {sex[0]}.", [sex[1]])
    ok = (sex[0] == "female") == wants_f
    return Judged("yes" if ok else "no", f"The criterion is about {'women' if wants_f else 'men'}; the patient "
                                         f"is {sex[0]}.", [sex[1]])
