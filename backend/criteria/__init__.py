"""Criterion evaluation: ask the model whether a criterion holds for a document, or a question's answer.

`evaluator` sends one Messages API request and reads the JSON reply; `prompts` is the wire format
(system prompts, user message, answer → verdict), shared with the demo model that answers it;
`labels` is what a verdict means. The apps' AI columns run on this at request time; the TrialGPT
benchmark (`backend.eval`) runs it over expert annotations. Imports nothing from `eval` or HTTP.
"""
