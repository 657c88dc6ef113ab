"""Readings a criterion sets as a value, checked against the value the note states: a cancer's stage
("stage IIB-IVA", "stage III or IV" against "stage 1B"), the ECOG performance status ("ECOG 0-1" against
"ECOG 2"), a few labs with a unit that pins them ("ejection fraction < 35%" against "EF was 25%"; creatinine,
bilirubin, glucose in mg/dL, hemoglobin in g/dL) and the vital signs a note reports (temperature in °C or °F,
systolic blood pressure, heart rate, oxygen saturation, weight in kg).

`compare(note_sentences, criterion)` answers "inside" or "outside" the criterion's values, with the sentence
that states the patient's value, or None when the criterion sets no such value or the note does not state
it: the rules decide only what both texts spell out; the rest stays with the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from backend.screening.note_reader import NUMBER_WORD, NUMBER_WORDS, any_of

Place = Literal["inside", "outside"]


class Reading(NamedTuple):
    place: Place
    sentence: int
    what: str  # "stage IB", "ECOG 2", "ejection fraction 25"


_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "1": 1, "2": 2, "3": 3, "4": 4, "0": 0}
_STAGE_TOKEN = r"(?:iv|iii|ii|i|[0-4])(?:[abc])?\b"
_NOTE_STAGE = re.compile(rf"\bstage\s+({_STAGE_TOKEN})", re.I)
_CRITERION_STAGE = re.compile(rf"\bstages?\s+((?:{_STAGE_TOKEN}(?:\s*(?:-|–|to|through|,|/|or|and)\s*"
                              rf"(?:stage\s+)?)?)+)", re.I)
_STAGE_PART = re.compile(rf"({_STAGE_TOKEN})(?:\s*(?:-|–|to|through)\s*(?:stage\s+)?({_STAGE_TOKEN}))?", re.I)
_METASTATIC = re.compile(r"(?<!non-)(?<!non )(?<!no )\bmetastatic\b", re.I)
# "axillary LN positive for metastatic carcinoma": a cancer in a regional node, not one spread far (stage IV)
_NODE = re.compile(r"\b(?:LNs?|lymph[- ]nodes?|nodes?|nodal|axill\w*|sentinel)\b", re.I)
_DISTANT = re.compile(r"\b(?:distant|liver|hepatic|lungs?|pulmonary|bones?|osseous|brain|peritone\w*|adrenal|widely)\b",
                      re.I)


def _stage(token: str) -> tuple[int, int]:
    """(number, letter: 0 none, 1 A, 2 B, 3 C)."""
    token = token.lower()
    letter = token[-1] if token[-1] in "abc" and token not in ("i", "ii", "iii", "iv") else ""
    return _ROMAN[token[: len(token) - len(letter)]], " abc".index(letter) if letter else 0


def _within(stage: tuple[int, int], low: tuple[int, int], high: tuple[int, int]) -> bool | None:
    """Is `stage` within low..high (a bound without a letter takes the whole stage)? None when the note's
    stage lacks the letter a bound needs ("stage II" against "IIB-IV")."""
    if stage[1] == 0:
        if low[0] < stage[0] < high[0] or stage[0] < low[0] or stage[0] > high[0]:
            return low[0] <= stage[0] <= high[0]
        return None if (stage[0] == low[0] and low[1] > 1) or (stage[0] == high[0] and 0 < high[1] < 3) else True
    return low <= stage <= (high if high[1] else (high[0], 3))


def _note_stage(sentences: Sequence[str]) -> tuple[tuple[int, int], int, str] | None:
    for i, s in enumerate(sentences):
        m = _NOTE_STAGE.search(s)
        if m:
            return _stage(m.group(1)), i, f"stage {m.group(1).upper()}"
    for i, s in enumerate(sentences):
        if _METASTATIC.search(s) and not (_NODE.search(s) and not _DISTANT.search(s)):
            return (4, 0), i, "metastatic (stage IV)"
    return None


def _stage_reading(sentences: Sequence[str], criterion: str) -> Reading | None:
    # every stage the criterion names: "stage IIIB (with effusion) or stage IV"
    asked = " , ".join(m.group(1) for m in _CRITERION_STAGE.finditer(criterion))
    if not asked:
        return None
    found = _note_stage(sentences)
    if found is None:
        return None
    stage, where, what = found
    fits: list[bool | None] = []
    for part in _STAGE_PART.finditer(asked):
        low = _stage(part.group(1))
        high = _stage(part.group(2)) if part.group(2) else low
        fits.append(_within(stage, low, high))
    if not fits or any(f is None for f in fits) and not any(fits):
        return None
    return Reading("inside" if any(fits) else "outside", where, what)


# ---- scales and labs: "<name> <comparator> <number>" in the criterion, "<name> <number>" in the note ----

# The comparators criteria write, shared with the age limits (`demo_judge`).
AT_LEAST = any_of(">= => ≥ > at_least greater_than_or_equal_to greater_than more_than over above higher_than "
                  "exceeding exceeds")
AT_MOST = any_of("<= =< ≤ < at_most no_more_than not_more_than no_greater_than less_than_or_equal_to less_than under "
                 "below up_to lower_than")
_CMP = rf"(?P<cmp>{AT_LEAST}|{AT_MOST}|=|of|between|from)?"
# a comparison after the unit: "40% or less"
_CMP_AFTER = r"(?:\s*or\s+(?:(?P<down>less|lower|fewer|below|under)|(?P<up>more|greater|higher|above|over))\b)?"


_VALUE = r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?"  # "100,000" or "1.5"


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _thousands(value: float) -> float:
    """Platelets per µL ("150,000") as ×10⁹/L ("150"): notes and criteria write either."""
    return value / 1000 if value >= 1000 else value


def _same(value: float) -> float:
    return value


def _celsius(value: float) -> float:
    """A temperature in °C; one above 50 can only be °F (notes and criteria write either)."""
    return round((value - 32) * 5 / 9, 2) if value > 50 else value


class _Measure(NamedTuple):
    name: str
    criterion: re.Pattern[str]
    note: re.Pattern[str]
    plausible: Callable[[float], bool]  # on the converted value
    convert: Callable[[float], float] = _same
    unless: re.Pattern[str] | None = None  # a criterion about something else measured in the same unit


def _measure(name: str, words: str, unit: str, plausible: Callable[[float], bool], *, note_words: str | None = None,
             note_unit: str | None = None, note: re.Pattern[str] | None = None,
             convert: Callable[[float], float] = _same, unless: str | None = None) -> _Measure:
    """`unit` must follow the criterion's number (so a limit in other units, "1.5 x ULN", is not read);
    `note_unit` is what may follow the note's number (by default the same unit); `note`, a pattern of its own
    where notes put the number first ("26 weeks gestation")."""
    # "7.0% and 10.5%", ">= 30% and < 50%": a range may repeat the unit and the comparison
    days = r"(?:\+\d(?!\d))?"  # "24+0 weeks"
    number = (rf"(?P<a>{_VALUE}){days}(?:\s*{unit})?(?:\s*(?:-|–|to|and|or|,)\s*(?:{AT_MOST}\s*)?"
              rf"(?:{_VALUE}\s*(?:,|or)\s*)?(?P<b>{_VALUE}){days})?")
    return _Measure(
        name,
        re.compile(rf"\b(?:{words})\b[^\d<>≤≥.;]{{0,25}}?{_CMP}\s*{number}(?!\d|\.\d)\s*{unit}{_CMP_AFTER}", re.I),
        # "rose from 0.2 to 1.4 g/dL": the value it came to
        note or re.compile(rf"\b(?:{note_words or words})\b[^\d.;]{{0,20}}?(?:{_VALUE}\s*(?:{unit})?\s*(?:to|→|->)\s*)?"
                           rf"(?P<a>{_VALUE})(?!\d|\.\d)\s*"
                           rf"{unit if note_unit is None else note_unit}", re.I),
        plausible, convert, re.compile(unless, re.I) if unless else None)


# A lab value in a note often comes without its unit ("creatinine 2.3"); the conventional US unit is meant
# unless another unit follows.
_NO_OTHER_UNIT = r"(?!\s*(?:µ|u|micro|mmol|mol|g/l|mg/l|%|x|×|times|/))"
_MG_DL = r"mg\s*/\s*dl"
_TEMPERATURE_UNIT = r"(?:°\s*[cf]\b|℃|℉|degrees?\s*(?:c\b|f\b|celsius|fahrenheit|centigrade)|c\b|f\b)"


_PLATELET_UNIT = (r"(?:x\s*10\s*\^?\s*9\s*/\s*l|x\s*10\s*\^?\s*3\s*/\s*(?:µl|ul|mm3|mm³)|/\s*(?:µl|ul|mm3|mm³)|"
                  r"k(?:/µl|/ul)?\b)")
_GFR_UNIT = r"ml\s*/\s*min"


_MEASURES = (
    _measure("ECOG", r"ecog(?: performance status| ps)?|zubrod|who performance status", r"(?!\s*%)",
             lambda v: 0 <= v <= 5),
    _measure("ejection fraction", r"(?:left ventricular |lv )?ejection fraction|lvef|ef", r"%", lambda v: 5 <= v <= 90),
    _measure("BMI", r"bmi|body mass index", r"(?:kg/m2|kg/m\^?2|kg/m²)?", lambda v: 10 <= v <= 80),
    _measure("HbA1c", r"hba1c|hemoglobin a1c|a1c|glycated hemoglobin", r"%", lambda v: 3 <= v <= 20),
    _measure("creatinine", r"(?:serum )?creatinine|cr", _MG_DL, lambda v: 0.1 <= v <= 25,
             note_unit=rf"(?:{_MG_DL}|{_NO_OTHER_UNIT})"),
    _measure("bilirubin", r"(?:total |serum )?bilirubin|t\.? ?bili|bili", _MG_DL, lambda v: 0.1 <= v <= 50,
             note_unit=rf"(?:{_MG_DL}|{_NO_OTHER_UNIT})"),
    _measure("glucose", r"(?:fasting |blood |plasma |serum )?glucose|blood sugar", _MG_DL, lambda v: 20 <= v <= 1500,
             note_unit=rf"(?:{_MG_DL}|{_NO_OTHER_UNIT})"),
    _measure("hemoglobin", r"ha?emoglobin(?! a1c)|hgb|hb(?!a1c)", r"g\s*/\s*dl", lambda v: 2 <= v <= 25,
             note_unit=rf"(?:g\s*/\s*dl|{_NO_OTHER_UNIT})"),
    _measure("temperature", r"(?:body |core |oral |rectal |axillary )?temperature|temp|fever", _TEMPERATURE_UNIT,
             lambda v: 30 <= v <= 45, note_words=r"temperature|temp|t(?=\s*(?:of\s*)?\d)|febrile|fevers?|pyrexia",
             note_unit=rf"(?:{_TEMPERATURE_UNIT}|(?!\s*(?:%|mm|/|bpm)))", convert=_celsius),
    _measure("systolic blood pressure", r"systolic (?:blood )?pressure|systolic bp|sbp", r"mm\s*hg",
             lambda v: 40 <= v <= 300, note_words=r"blood pressure|bp|systolic (?:blood )?pressure|sbp",
             note_unit=r"(?:mm\s*hg|(?=\s*/\s*\d)|(?!\s*(?:%|bpm)))"),
    _measure("heart rate", r"heart rate|pulse(?: rate)?|hr", r"(?:bpm|beats?\s*(?:per|/|a)\s*min\w*|/\s*min)",
             lambda v: 20 <= v <= 250, note_words=r"heart rate|pulse(?: rate)?|hr|tachycardic to",
             note_unit=r"(?:bpm|beats?\s*(?:per|/|a)\s*min\w*|/\s*min|(?!\s*(?:%|mm|/|°)))"),
    _measure("oxygen saturation", r"(?:oxygen|o2|arterial oxygen|peripheral (?:capillary )?oxygen) saturation|"
             r"spo2|sao2|o2 sat|sats?", r"%", lambda v: 40 <= v <= 100,
             note_words=r"(?:oxygen|o2) saturation|spo2|sao2|o2 sat\w*|sat(?:urating|s)?"),
    _measure("weight", r"(?:body )?weight|weighing|weighs?", r"kg\b", lambda v: 1 <= v <= 400,
             unless=r"gain|loss|lost|losing|chang|reduc|increas|decreas|fluctuat"),
    _measure("platelets", r"platelets?(?: count)?|plt", _PLATELET_UNIT, lambda v: 1 <= v <= 2000,
             note_unit=rf"(?:{_PLATELET_UNIT}|(?!\s*(?:%|mg|g/|mmol)))", convert=_thousands),
    _measure("FEV1", r"(?:post-bronchodilator |pre-bronchodilator )?fev1(?!\s*[/:])", r"%(?:\s*(?:of\s*)?predicted)?",
             lambda v: 5 <= v <= 150, unless=r"revers|increase|improv|change|declin|respons|variab|within \d+\s*%"),
    _measure("eGFR", r"egfr|e-gfr|estimated glomerular filtration rate|gfr|creatinine clearance|crcl", _GFR_UNIT,
             lambda v: 1 <= v <= 200),
    _measure("potassium", r"(?:serum )?potassium|k\+?", r"(?:mmol|meq)\s*/\s*l", lambda v: 1.5 <= v <= 9,
             note_unit=rf"(?:(?:mmol|meq)\s*/\s*l|{_NO_OTHER_UNIT})"),
    _measure("sodium", r"(?:serum )?sodium|na\+?", r"(?:mmol|meq)\s*/\s*l", lambda v: 100 <= v <= 180,
             note_unit=rf"(?:(?:mmol|meq)\s*/\s*l|{_NO_OTHER_UNIT})"),
    _measure("albumin", r"(?:serum )?albumin(?![\s-]*(?:to|/|creatinine))", r"g\s*/\s*dl", lambda v: 0.5 <= v <= 7,
             note_unit=rf"(?:g\s*/\s*dl|{_NO_OTHER_UNIT})"),
    _measure("urine albumin-to-creatinine ratio", r"(?:urine |urinary )?albumin[\s-]*(?:to[\s-]*)?creatinine ratio|"
             r"u?acr", r"mg\s*/\s*g", lambda v: 0 <= v <= 20000),
    _measure("ALT", r"alt|alanine (?:amino)?transaminase|alanine aminotransferase|sgpt", r"(?:iu|u)\s*/\s*l",
             lambda v: 1 <= v <= 5000),
    _measure("AST", r"ast|aspartate (?:amino)?transaminase|aspartate aminotransferase|sgot", r"(?:iu|u)\s*/\s*l",
             lambda v: 1 <= v <= 5000),
    _measure("neutrophils", r"absolute neutrophil count|anc|neutrophils?(?: count)?", _PLATELET_UNIT,
             lambda v: 0 <= v <= 60, note_unit=rf"(?:{_PLATELET_UNIT}|(?!\s*(?:%|mg|g/|mmol)))", convert=_thousands),
    _measure("eosinophils", r"(?:blood )?eosinophils?(?: count)?|eos", r"(?:cells\s*)?/\s*(?:µl|ul|mm3|mm³)",
             lambda v: 0 <= v <= 20000, note_unit=r"(?:cells\s*)?/\s*(?:µl|ul|mm3|mm³)"),
    _measure("CD4 count", r"cd4\+?(?:\s*t[\s-]*(?:cell|lymphocyte)s?)?(?: count)?",
             r"(?:cells\s*)?/\s*(?:µl|ul|mm3|mm³)",
             lambda v: 0 <= v <= 3000, note_unit=r"(?:(?:cells\s*)?/\s*(?:µl|ul|mm3|mm³)|(?!\s*(?:%|/)))"),
    _measure("viral load", r"(?:hiv(?:-1)? )?(?:rna|viral load)|hbv dna|hcv rna", r"(?:copies|iu)\s*/\s*ml",
             lambda v: 0 <= v <= 1e9),
    _measure("M-protein", r"(?:serum )?m[\s-]*(?:protein|spike)|monoclonal (?:protein|component)|paraprotein",
             r"g\s*/\s*dl", lambda v: 0 <= v <= 15),
    _measure("PSA", r"psa|prostate[\s-]*specific antigen", r"ng\s*/\s*ml", lambda v: 0 <= v <= 100000),
    _measure("testosterone", r"(?:serum |total )?testosterone", r"ng\s*/\s*dl", lambda v: 0 <= v <= 3000),
    _measure("uric acid", r"(?:serum )?(?:urate|uric acid)", _MG_DL, lambda v: 0.5 <= v <= 25,
             note_unit=rf"(?:{_MG_DL}|{_NO_OTHER_UNIT})"),
    _measure("LDL cholesterol", r"ldl(?:-c| cholesterol)?|low[\s-]density lipoprotein(?: cholesterol)?", _MG_DL,
             lambda v: 5 <= v <= 600, note_unit=rf"(?:{_MG_DL}|{_NO_OTHER_UNIT})"),
    _measure("triglycerides", r"(?:serum |fasting )?triglycerides?|tg", _MG_DL, lambda v: 10 <= v <= 10000,
             note_unit=rf"(?:{_MG_DL}|{_NO_OTHER_UNIT})"),
    _measure("QTc", r"qtc[fb]?(?: interval)?|corrected qt(?: interval)?", r"(?:ms|msec|milliseconds?)\b",
             lambda v: 250 <= v <= 750, note_unit=r"(?:(?:ms|msec|milliseconds?)\b|(?!\s*(?:%|/)))"),
    _measure("FEV1/FVC", r"(?:post-bronchodilator |pre-bronchodilator )?fev1\s*/\s*fvc(?: ratio)?", r"%?",
             lambda v: 0.15 <= v <= 1.0, convert=lambda v: v / 100 if v > 1.5 else v),
    # scores without a unit: a number after the score's name
    _measure("MELD score", r"meld(?:-na)?(?: score)?", r"(?!\s*%)", lambda v: 6 <= v <= 40),
    _measure("EDSS", r"edss(?: score)?|expanded disability status scale(?: score)?", r"(?!\s*%)",
             lambda v: 0 <= v <= 10),
    _measure("DAS28", r"das-?28(?:-(?:crp|esr))?(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 10),
    _measure("CDAI", r"cdai(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 600),
    _measure("MoCA", r"moca(?: score)?|montreal cognitive assessment(?: score)?", r"(?!\s*%)",
             lambda v: 0 <= v <= 30),
    _measure("MMSE", r"mmse(?: score)?|mini[\s-]*mental state exam\w*(?: score)?", r"(?!\s*%)",
             lambda v: 0 <= v <= 30),
    _measure("PANSS", r"panss(?: total)?(?: score)?", r"(?!\s*%)", lambda v: 30 <= v <= 210),
    _measure("25-hydroxyvitamin D", r"(?:serum )?25-?(?:oh|hydroxy)[\s-]*(?:vit(?:amin)?\.?\s*)?d[23]?|"
             r"vitamin d(?: level)?|vit\.? d", r"ng\s*/\s*ml", lambda v: 2 <= v <= 250,
             note_unit=r"(?:ng\s*/\s*ml|(?!\s*(?:%|iu|nmol|/)))"),
    _measure("NIHSS", r"nihss(?: score)?|nih stroke scale(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 42),
    _measure("modified Rankin Scale", r"(?:modified rankin scale|mrs)(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 6),
    _measure("MADRS", r"madrs(?: total)?(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 60),
    _measure("HAM-D", r"(?:ham-?d|hamd|hdrs)(?:-?(?:17|21))?(?: total)?(?: score)?", r"(?!\s*%)",
             lambda v: 0 <= v <= 60),
    _measure("EASI", r"easi(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 72),
    _measure("PASI", r"pasi(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 72),
    _measure("IGA", r"(?:v?iga|investigator'?s global assessment)(?: score)?", r"(?!\s*%)", lambda v: 0 <= v <= 4),
    _measure("CDR", r"cdr(?: global)?(?: score)?|clinical dementia rating(?: global)?(?: score)?", r"(?!\s*%)",
             lambda v: 0 <= v <= 3),
    _measure("Mayo score", r"(?:total |full |modified )?mayo(?: clinic)? score", r"(?!\s*%)", lambda v: 0 <= v <= 12),
    _measure("NT-proBNP", r"nt-?pro-?bnp|n-terminal pro-?b-type natriuretic peptide", r"pg\s*/\s*ml",
             lambda v: 0 <= v <= 100000, note_unit=r"(?:pg\s*/\s*ml|(?!\s*(?:%|ng|mg|/)))"),
    _measure("BNP", r"(?<!pro-)(?<!pro)bnp|b-type natriuretic peptide", r"pg\s*/\s*ml", lambda v: 0 <= v <= 10000,
             note_unit=r"(?:pg\s*/\s*ml|(?!\s*(?:%|ng|mg|/)))"),
    _measure("INR", r"inr|international normali[sz]ed ratio", r"(?!\s*%)", lambda v: 0.5 <= v <= 15),
    _measure("pack-years", r"smoking history|smok\w*|tobacco|cigarettes?", r"(?:pack[\s-]*years?|py)\b",
             lambda v: 0 <= v <= 300,
             note=re.compile(r"(?P<a>\d+(?:\.\d+)?)\s*(?:\+\s*)?[\s-]*(?:pack[\s-]*years?|pk[\s-]*yrs?|py)\b", re.I)),
    _measure("gestational age", r"gestational age|gestation", r"(?:weeks?|wks?)\b", lambda v: 4 <= v <= 44,
             note=re.compile(r"\b(?P<a>\d{1,2})(?:\+\d)?\s*(?:weeks?|wks?)['’]?\s*(?:of\s+)?"
                             r"(?:gestation|gestational age|pregnan\w*)\b|"
                             r"\bgestational age\s*(?:of\s*)?:?\s*(?P<b>\d{1,2})\b|"
                             r"\bG\d+\s*P\d+\w*\s*(?:at|@)\s*(?P<c>\d{1,2})(?:\+\d)?\s*(?:weeks?|wks?)\b", re.I)),
)
_LOW = re.compile(rf"{AT_LEAST}|from", re.I)
_HIGH = re.compile(AT_MOST, re.I)
_STRICT = re.compile(r"^(?:>|<|more than|greater than|over|above|exceeding|exceeds|fewer than|less than|under|below|"
                     r"higher than|lower than)$", re.I)
_BY_NAME = {m.name: m for m in _MEASURES}


def meets(value: float, cmp: str, limit: float) -> bool:
    """`value` against "cmp limit" ("> 20", "at most 10", "fewer than 3"): strict comparisons exclude the limit."""
    strict = bool(_STRICT.match(cmp))
    if _HIGH.match(cmp) or cmp.lower() == "fewer than":
        return value < limit if strict else value <= limit
    return value > limit if strict else value >= limit


# A note may give a value more than once: the one it dates now is the patient's, one it dates before is not.
_NOW_VALUE = re.compile(r"\b(?:today|now|current(?:ly)?|latest|most recent|recent|on admission|at admission|"
                        r"at presentation|at screening|this (?:morning|week|visit))\b", re.I)
_EARLIER_VALUE = re.compile(r"\b(?:pre-[a-z]+|prior|previous(?:ly)?|baseline|at diagnosis|initial(?:ly)?|"
                            r"originally)\b[^.;:]*$", re.I)


def _stated(m: _Measure, sentences: Sequence[str], earlier: bool = False) -> list[tuple[int, str]]:
    """(sentence, value) of each value the note states for `m`, the current one first (the earlier one, when
    the criterion asks for that)."""
    found: list[tuple[int, int, str]] = []
    for i, s in enumerate(sentences):
        for stated in m.note.finditer(s):
            said = stated.group("a") or stated.groupdict().get("b") or stated.groupdict().get("c")
            if said:
                before = s[max(0, stated.start() - 40):stated.start()]
                rank = 2 if _EARLIER_VALUE.search(before) else 0 if _NOW_VALUE.search(s) else 1
                rank = 2 - rank if earlier else rank
                found.append((rank, i, said))
    return [(i, said) for _, i, said in sorted(found, key=lambda f: (f[0], f[1]))]


def _value_reading(sentences: Sequence[str], criterion: str) -> Reading | None:
    for m in _MEASURES:
        wanted = m.criterion.search(criterion)
        if not wanted or m.unless and m.unless.search(criterion):
            continue
        earlier = bool(_EARLIER_VALUE.search(criterion[: wanted.start()]))  # "Pre-stroke mRS 0-1"
        for i, said in _stated(m, sentences, earlier):
            if not m.plausible(value := m.convert(_number(said))):
                continue
            a = m.convert(_number(wanted.group("a")))
            b = m.convert(_number(wanted.group("b"))) if wanted.group("b") else None
            cmp = wanted.group("cmp") or ""
            if not cmp and (wanted.group("down") or wanted.group("up")):
                cmp = "<=" if wanted.group("down") else ">="
            strict = bool(_STRICT.match(cmp))
            if b is not None and b > a:
                inside = (a < value if strict else a <= value) and value <= b
            elif _LOW.fullmatch(cmp.lower()) or _LOW.match(cmp.lower()):
                inside = value > a if strict else value >= a
            elif _HIGH.match(cmp.lower()):
                inside = value < a if strict else value <= a
            else:
                continue  # "ECOG 2" alone: a value, not a limit we can read
            return Reading("inside" if inside else "outside", i, f"{m.name} {value:g}")
    return None


# A count of things, the criterion's against the note's ("more than 4 cerebral microhemorrhages" against "3 lobar
# cerebral microhemorrhages"), when the criterion bounds no time (the note's count may be over another period).
_NUMBER = rf"\d{{1,3}}|{NUMBER_WORD}"
_COUNT_CRITERION = re.compile(rf"(?P<cmp>{AT_LEAST}|{AT_MOST}|fewer than)\s*(?P<n>{_NUMBER})\s+"
                              r"(?P<what>(?:[a-z-]+\s+){0,3}?(?P<head>[a-z-]{4,}?)(?:e?s))\b", re.I)
_KIND_OF_COUNT = re.compile(r"\b(?:positive|negative|involved|examined|removed|resected|sampled|retrieved|benign|"
                            r"malignant|new|enhancing|active)\b", re.I)
_NOT_THINGS = re.compile(r"^(?:year|month|week|day|hour|minute|time|unit|dose|cigarette|drink|pack|point|cm|mm)$",
                         re.I)
_WINDOW = re.compile(r"\b(?:within|in|during|over|per|a|each|every)\s+(?:the\s+)?(?:last|past|previous|preceding|"
                     r"\d+|day|week|month|year)", re.I)


def _count(n: str) -> int:
    return int(n) if n.isdigit() else NUMBER_WORDS[n.lower()]


def _count_reading(sentences: Sequence[str], criterion: str) -> Reading | None:
    m = _COUNT_CRITERION.search(criterion)
    if not m or _NOT_THINGS.match(m.group("head")) or _WINDOW.search(criterion[m.end():]):
        return None
    wanted, cmp = _count(m.group("n")), m.group("cmp").lower()
    said = re.compile(rf"\b({_NUMBER})\s+(?:[a-z-]+\s+){{0,3}}?{re.escape(m.group('head'))}(?:e?s)?\b", re.I)
    asked = _KIND_OF_COUNT.findall(criterion[m.start():m.end() + 20])
    for i, s in enumerate(sentences):
        if (found := said.search(s)) is None:
            continue
        if {w.lower() for w in asked} != {w.lower() for w in _KIND_OF_COUNT.findall(s[found.start():found.end() + 20])}:
            return None  # "8 nodes examined" against "5 positive nodes": other things counted
        value = _count(found.group(1))
        place: Place = "inside" if meets(value, cmp, wanted) else "outside"
        return Reading(place, i, f"{value} {m.group('what').split()[-1]}")
    return None


# A limit in multiples of the upper limit of normal ("AST/ALT ≤ 2.5 × ULN"), against the note's value and the
# ULN it gives ("ALT 28 U/L (ULN 40)") or else every usual adult ULN: decided only when all of them agree.
_ULN_LIMIT = re.compile(rf"(?P<cmp>{AT_LEAST}|{AT_MOST})\s*(?P<k>\d+(?:\.\d+)?)\s*(?:x|×|times)\s*(?:the\s+)?"
                        r"(?:institutional\s+)?(?:uln|upper limits? of (?:the )?normal)", re.I)
_USUAL_ULN = {  # name in the criterion, the measure read in the note, the lowest and highest usual ULN
    "ALT": (r"\b(?:alt|sgpt|alanine (?:amino)?transaminase|alanine aminotransferase)\b", (33, 56)),
    "AST": (r"\b(?:ast|sgot|aspartate (?:amino)?transaminase|aspartate aminotransferase)\b", (32, 48)),
    "bilirubin": (r"\bbilirubin\b", (1.0, 1.3)),
    "creatinine": (r"\bcreatinine\b(?!\s*clearance)", (1.0, 1.3)),
}
_NOTE_ULN = re.compile(r"\bULN\s*(?:of\s*|=\s*|:\s*|is\s*)?(\d+(?:\.\d+)?)", re.I)  # "28 U/L (ULN 40)"


def _uln_reading(sentences: Sequence[str], criterion: str) -> Reading | None:
    limit = _ULN_LIMIT.search(criterion)
    if limit is None:
        return None
    cmp, k = limit.group("cmp").lower(), float(limit.group("k"))
    upper = bool(_HIGH.match(cmp))
    places: list[tuple[Place, int, str]] = []
    for name, (words, (low, high)) in _USUAL_ULN.items():
        if not re.search(words, criterion[: limit.start()], re.I):
            continue
        measure = _BY_NAME[name]
        for i, said in _stated(measure, sentences):
            value = _number(said)
            if not measure.plausible(value):
                continue
            given = re.search(rf"(?<![\d.]){re.escape(said)}[^,;\d]{{0,20}}?{_NOTE_ULN.pattern}", sentences[i], re.I)
            ulns = (float(given.group(1)),) * 2 if given else (low, high)
            fits = [meets(value, cmp, k * u) for u in ulns]
            if all(fits) or not any(fits):
                places.append(("inside" if fits[0] else "outside", i, f"{name} {value:g}"))
            break
    if not places:
        return None
    # an upper limit binds every value it names; a lower one is met by any
    decisive = [p for p in places if p[0] == ("outside" if upper else "inside")]
    return Reading(*(decisive or places)[0])


# Drinks of alcohol a day or a week, the criterion's limit against the note's habit ("> 14 drinks per week" against
# "3-4 beers nightly"); a range decides only when both its ends fall on the same side.
DRINK_LIMIT = re.compile(rf"(?P<cmp>{AT_LEAST}|{AT_MOST})\s*(?P<n>\d+)\s*(?:standard\s+|alcoholic\s+)?drinks?\s*"
                         r"(?:per|a|/|each|every)\s*(?P<per>day|week)\b", re.I)
_DRINKS_SAID = re.compile(r"\b(?P<lo>\d+)(?:\s*(?:-|–|to)\s*(?P<hi>\d+))?\s*(?:standard\s+|alcoholic\s+)?"
                          r"(?:drinks?|beers?|cans? of beer|glass(?:es)? of (?:wine|beer)|shots?(?: of \w+)?)\b"
                          r"[^.;\d]{0,15}?\b(?P<per>nightly|daily|a day|per day|/day|each day|every day|a night|"
                          r"per night|a week|per week|/week|weekly|each week)\b", re.I)


def _drinks_reading(sentences: Sequence[str], criterion: str) -> Reading | None:
    limit = DRINK_LIMIT.search(criterion)
    if limit is None:
        return None
    per_week = limit.group("per").lower() == "week"
    for i, sentence in enumerate(sentences):
        if (said := _DRINKS_SAID.search(sentence)) is None:
            continue
        weekly = "week" in said.group("per").lower()
        scale = (1 if weekly else 7) if per_week else (1 / 7 if weekly else 1)
        ends = [float(said.group("lo")) * scale, float(said.group("hi") or said.group("lo")) * scale]
        fits = [meets(v, limit.group("cmp"), float(limit.group("n"))) for v in ends]
        if fits[0] != fits[1]:
            return None
        amount = " to ".join(dict.fromkeys(f"{v:g}" for v in ends))
        return Reading("inside" if fits[0] else "outside", i,
                       f"about {amount} drinks a {'week' if per_week else 'day'}")
    return None


def compare(sentences: Sequence[str], criterion: str) -> Reading | None:
    return (_stage_reading(sentences, criterion) or _value_reading(sentences, criterion)
            or _uln_reading(sentences, criterion) or _count_reading(sentences, criterion)
            or _drinks_reading(sentences, criterion))
