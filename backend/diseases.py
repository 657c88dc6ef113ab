"""Diseases' abbreviations, with the name a registry files each under: one table for the chat's follow-up
filter (`chat/followups.py`, any case) and the screening's note reader (`screening/ingest.py`, which adds the
history-list abbreviations of clinical notes and reads only upper case, where "RA" is room air as often)."""

from __future__ import annotations

ABBREVIATIONS = {
    "nsclc": "non-small cell lung cancer", "sclc": "small cell lung cancer", "hnscc": "head and neck cancer",
    "crc": "colorectal cancer", "hcc": "hepatocellular carcinoma", "rcc": "renal cell carcinoma",
    "tnbc": "triple negative breast cancer", "aml": "acute myeloid leukemia", "cll": "chronic lymphocytic leukemia",
    "cml": "chronic myeloid leukemia", "mds": "myelodysplastic syndrome", "dlbcl": "diffuse large b-cell lymphoma",
    "gbm": "glioblastoma", "copd": "chronic obstructive pulmonary disease", "ipf": "idiopathic pulmonary fibrosis",
    "ild": "interstitial lung disease", "als": "amyotrophic lateral sclerosis", "t2d": "type 2 diabetes",
    "t1d": "type 1 diabetes", "nash": "nonalcoholic steatohepatitis", "ibd": "inflammatory bowel disease",
    "ra": "rheumatoid arthritis", "sle": "systemic lupus erythematosus", "hiv": "hiv infection",
    "covid": "covid 19", "pdac": "pancreatic cancer",
}
