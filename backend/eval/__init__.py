"""Criterion-level evaluation: how well a model's MET / NOT_MET / UNKNOWN verdicts agree with experts.

`evaluator` is the one place that asks the model about a criterion (the eval harness and the apps' AI
columns both use it); `harness` runs it over the TrialGPT expert annotations and writes run artifacts.
Spec: `shared/spec/trialmatch-pipeline-contracts.md` (VALIDATE, label mapping, metrics, run artifacts).
"""
