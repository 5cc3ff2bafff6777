"""IBE-Eval (Dalal et al., 2024): score LLM explanations by consistency, parsimony, coherence
and uncertainty, and pick the best explanation of each question with a linear selector.

The lm-eval tasks in ``lm_eval_tasks/ibe`` generate the explanations; ``python -m
ibe_postprocess score`` turns their logged samples into features and ``report`` fits the
selector (see the task README for the workflow).
"""
