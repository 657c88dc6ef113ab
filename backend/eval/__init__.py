"""The TrialGPT criterion benchmark: how well the evaluator's MET / NOT_MET / UNKNOWN verdicts agree with
experts. Built on `backend.criteria` (the evaluator the apps' AI columns run on); nothing in the product
imports this package.

`dataset` + `label_map` read the expert annotations, `harness` runs the evaluator over a sample under a
budget (its shapes in `run`), `metrics` + `aggregate` score it, `artifacts` writes the run, `cli` is
`python -m backend eval criteria`. Spec: `shared/spec/trialmatch-pipeline-contracts.md` (VALIDATE, label
mapping, metrics, run artifacts).
"""
